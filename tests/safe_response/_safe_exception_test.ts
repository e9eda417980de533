import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { anotherCopy } from "../another_copy.ts";
import {
  definedCatalogOf,
  initSafeException,
  SAFE_EXCEPTION,
} from "../../safe_response/_safe_exception.ts";
import { LIBRARY_ERROR } from "../../safe_response/_library_error.ts";
import { defineErrors, isSafeException, SafeException } from "../../safe_response/mod.ts";

type Target = Partial<Pick<SafeException<string>, "code" | "overrides" | "catalog">>;
import { SafeException as NestSafeException } from "../../safe_response/nest/mod.ts";

describe("initSafeException", () => {
  it("gives the target its fields and both brands, frozen overrides, hidden brands", () => {
    const catalog = defineErrors({ GONE: { status: 410, message: "Gone" } });
    const target = {} as Target;
    initSafeException(target, "GONE", { message: "m", details: { id: 1 }, catalog });
    assert.equal(target.code, "GONE");
    assert.deepEqual(target.overrides, { message: "m", details: { id: 1 } });
    assert.ok(Object.isFrozen(target.overrides));
    assert.equal(target.catalog, catalog);
    const branded = target as unknown as Record<symbol, unknown>;
    assert.equal(branded[SAFE_EXCEPTION], true);
    assert.equal(branded[LIBRARY_ERROR], true);
    assert.deepEqual(Object.keys(target).sort(), ["catalog", "code", "overrides"]);
    assert.ok(isSafeException(target));
  });

  it("leaves catalog absent when none is given", () => {
    const target = {} as Target;
    initSafeException(target, "X", {});
    assert.equal("catalog" in target, false);
  });

  it("brands the core's and the Nest entry's exceptions alike, across copies", () => {
    assert.equal(SAFE_EXCEPTION, Symbol.for("@saferoute/api-kit/safe-exception"));
    for (const error of [new SafeException("X"), new NestSafeException("X")]) {
      assert.equal((error as unknown as Record<symbol, unknown>)[SAFE_EXCEPTION], true);
      assert.ok(isSafeException(error));
    }
  });
});

describe("the names of @nestarc/safe-response 0.14 (errorKey, overrideMessage, overrideDetails)", () => {
  it("reads the key and the per-throw overrides, read-only, on both exceptions", () => {
    for (const Exception of [SafeException, NestSafeException]) {
      const error = new Exception("GONE", { message: "m", details: { id: 1 } });
      assert.equal(error.errorKey, "GONE");
      assert.equal(error.overrideMessage, "m");
      assert.deepEqual(error.overrideDetails, { id: 1 });
      assert.throws(() => {
        (error as { errorKey: string }).errorKey = "OTHER";
      }, TypeError);
      const bare = new Exception("X");
      assert.equal(bare.overrideMessage, undefined);
      assert.equal(bare.overrideDetails, undefined);
      assert.ok(!Object.keys(bare).some((key) => ["errorKey", "overrideMessage"].includes(key)));
    }
  });
});

describe("definedCatalogOf", () => {
  it("finds the one defined catalog with a key; none for a missing or shared key", () => {
    const only = defineErrors({
      ONLY_HERE: { status: 404, message: "x" },
      TWICE: { status: 409, message: "a" },
    });
    const other = defineErrors({ TWICE: { status: 410, message: "b" } });
    assert.equal(definedCatalogOf("ONLY_HERE"), only);
    assert.equal(definedCatalogOf("TWICE"), undefined);
    assert.equal(definedCatalogOf("NOWHERE"), undefined);
    assert.ok(other.has("TWICE"));
  });
});

describe("the registry of defined catalogs across copies of the library", () => {
  it("a catalog defined by another copy (an app loading the ESM and the CommonJS build) is found", async () => {
    // Another instance of this file, as a second copy of the library loads it.
    const copy = await anotherCopy<typeof import("../../safe_response/_safe_exception.ts")>(
      "../../safe_response/_safe_exception.ts",
      import.meta.url,
    );
    const theirs = { has: (key: string) => key === "FROM_THE_OTHER_COPY", get: () => undefined };
    copy.rememberDefinedCatalog(theirs);
    assert.equal(definedCatalogOf("FROM_THE_OTHER_COPY"), theirs);
    assert.equal(copy.definedCatalogOf("FROM_THE_OTHER_COPY"), theirs);
  });
});
