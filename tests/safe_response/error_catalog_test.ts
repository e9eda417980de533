import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  catalogErrorShape,
  defineErrors,
  type ErrorKey,
  isSafeException,
  SafeException,
} from "../../safe_response/error_catalog.ts";
import { resolveError } from "../../safe_response/error_resolution.ts";

const Errors = defineErrors({
  USER_NOT_FOUND: { status: 404, message: "User not found" },
  EMAIL_TAKEN: { status: 409, message: "Email already registered", details: { field: "email" } },
});

describe("defineErrors", () => {
  it("builds a typed catalog", () => {
    assert.deepEqual(Errors.keys, ["USER_NOT_FOUND", "EMAIL_TAKEN"]);
    assert.equal(Errors.get("USER_NOT_FOUND")?.status, 404);
    assert.equal(Errors.has("NOPE"), false);
    assert.equal(Errors.get("__proto__"), undefined);
  });

  it("rejects bad entries, naming them", () => {
    assert.throws(() => defineErrors({ A: { status: 200, message: "ok" } }), /A\.status/);
    assert.throws(() => defineErrors({ B: { status: 400, message: "" } }), /B\.message/);
    assert.throws(() => defineErrors(null as never), /must be an object/);
  });

  it("type-checks keys where the catalog's type is known", () => {
    // @ts-expect-error: a typo is not a key of the catalog
    Errors.exception("USER_NOT_FOUD");
    // @ts-expect-error: likewise with the generic
    new SafeException<ErrorKey<typeof Errors>>("EMAIL_TAKN");
    const untyped = new SafeException("ANY_KEY"); // the plain form takes any string
    assert.equal(untyped.code, "ANY_KEY");
  });
});

describe("SafeException resolution", () => {
  it("takes status and message from the catalog, code = key", () => {
    const resolved = resolveError(new SafeException("USER_NOT_FOUND"), { errorCatalog: Errors });
    assert.deepEqual(resolved, {
      statusCode: 404,
      code: "USER_NOT_FOUND",
      message: "User not found",
      unexpected: false,
    });
  });

  it("applies per-throw overrides over the catalog's details", () => {
    const thrown = Errors.exception("EMAIL_TAKEN", { message: "Taken: a@b.c" });
    assert.deepEqual(resolveError(thrown), {
      statusCode: 409,
      code: "EMAIL_TAKEN",
      message: "Taken: a@b.c",
      details: { field: "email" },
      unexpected: false,
    });
    const details = { field: "alias" };
    assert.equal(resolveError(Errors.exception("EMAIL_TAKEN", { details })).details, details);
  });

  it("follows the single code order: mapper (defaultCode = key) first", () => {
    const seen: unknown[] = [];
    const resolved = resolveError(new SafeException("USER_NOT_FOUND"), {
      errorCatalog: Errors,
      errorCodes: { 404: "MISSING" },
      errorCodeMapper: (_e, context) => {
        seen.push(context);
        return undefined;
      },
    });
    assert.deepEqual(seen, [{ statusCode: 404, defaultCode: "USER_NOT_FOUND" }]);
    assert.equal(resolved.code, "USER_NOT_FOUND"); // the key beats errorCodes
  });

  it("a key in no catalog is a 500 with a reason for the log", () => {
    const resolved = resolveError(new SafeException("GHOST"), { errorCatalog: Errors });
    assert.equal(resolved.statusCode, 500);
    assert.equal(resolved.code, "INTERNAL_SERVER_ERROR");
    assert.equal(resolved.message, "Internal Server Error");
    assert.equal(resolved.unexpected, true);
    assert.match(resolved.reason!, /`GHOST` is not in the error catalog/);
    assert.match(resolveError(new SafeException("GHOST")).reason!, /no errorCatalog registered/);
  });

  it("is recognised by its brand, not its class", () => {
    const thrown = new SafeException("USER_NOT_FOUND");
    assert.equal(isSafeException(thrown), true);
    const brand = Symbol.for("@saferoute/api-kit/safe-exception");
    const fromOtherCopy = { [brand]: true, code: "USER_NOT_FOUND", overrides: {} };
    assert.equal(isSafeException(fromOtherCopy), true);
    assert.equal(resolveError(fromOtherCopy, { errorCatalog: Errors }).statusCode, 404);
    assert.equal(isSafeException(Object.assign(new Error("x"), { code: "USER_NOT_FOUND" })), false);
  });

  it("catalogErrorShape prefers the exception's own catalog", () => {
    const other = defineErrors({ USER_NOT_FOUND: { status: 410, message: "Gone" } });
    assert.equal(
      (catalogErrorShape(other.exception("USER_NOT_FOUND"), Errors) as { status: number }).status,
      410,
    );
  });
});
