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

  it("reads entries by key, as the catalog object of @nestarc/safe-response", () => {
    const catalog = defineErrors({
      USER_NOT_FOUND: { status: 404, message: "User not found", description: "No such user" },
      EMAIL_TAKEN: { status: 409, message: "Taken", details: { field: "email" } },
    });
    assert.equal(catalog.USER_NOT_FOUND.status, 404);
    assert.equal(catalog.USER_NOT_FOUND.message, "User not found");
    assert.equal(catalog.USER_NOT_FOUND.description, "No such user");
    assert.equal(catalog.USER_NOT_FOUND.details, undefined);
    assert.deepEqual(catalog.EMAIL_TAKEN.details, { field: "email" });
    assert.equal(catalog.EMAIL_TAKEN, catalog.get("EMAIL_TAKEN")); // one entry, two ways in
    assert.deepEqual(Object.keys(catalog), ["USER_NOT_FOUND", "EMAIL_TAKEN"]);
    assert.equal(Object.isFrozen(catalog), true);
    assert.equal(Object.isFrozen(catalog.USER_NOT_FOUND), true);
    // the current API is unchanged
    assert.deepEqual(catalog.keys, ["USER_NOT_FOUND", "EMAIL_TAKEN"]);
    assert.equal(catalog.has("EMAIL_TAKEN"), true);
    assert.equal(catalog.exception("EMAIL_TAKEN").catalog, catalog);
    // @ts-expect-error: not a key of the catalog
    catalog.NOPE;
  });

  it("copies entries: the caller's definitions stay writable and unshared", () => {
    const definitions = { GONE: { status: 410, message: "Gone", details: { a: 1 } } };
    const catalog = defineErrors(definitions);
    assert.equal(Object.isFrozen(definitions.GONE), false);
    assert.notEqual(catalog.GONE, definitions.GONE);
    definitions.GONE.status = 411;
    assert.equal(catalog.GONE.status, 410);
  });

  it("rejects keys that would shadow the catalog's own members, naming them", () => {
    for (const key of ["get", "has", "keys", "exception", "constructor", "toString", "__proto__"]) {
      const definitions = JSON.parse(`{"${key}": { "status": 400, "message": "x" }}`);
      assert.throws(
        () => defineErrors(definitions),
        (error: Error) =>
          error instanceof TypeError && error.message.includes(`\`${key}\``) &&
          /shadow/.test(error.message),
        key,
      );
    }
  });

  it("rejects a description that is not a string", () => {
    assert.throws(
      () => defineErrors({ C: { status: 400, message: "m", description: 1 as never } }),
      /C\.description/,
    );
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

  it("clears the catalog's details with details: null; undefined keeps them", () => {
    const cleared = resolveError(Errors.exception("EMAIL_TAKEN", { details: null }));
    assert.equal("details" in cleared, false);
    const kept = resolveError(Errors.exception("EMAIL_TAKEN", { details: undefined }));
    assert.deepEqual(kept.details, { field: "email" });
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
