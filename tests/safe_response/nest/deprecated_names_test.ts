import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as nest from "../../../safe_response/nest/mod.ts";
import { SafeResponseFilter } from "../../../safe_response/nest/safe_response.filter.ts";
import { SafeResponseInterceptor } from "../../../safe_response/nest/safe_response.interceptor.ts";

describe("deprecated names of @nestarc/safe-response (./safe-response/nest)", () => {
  it("SafeExceptionFilter is SafeResponseFilter; the filter and interceptor are exported", () => {
    assert.equal(nest.SafeExceptionFilter, SafeResponseFilter);
    assert.equal(nest.SafeResponseFilter, SafeResponseFilter);
    assert.equal(nest.SafeResponseInterceptor, SafeResponseInterceptor);
    const typed: nest.SafeExceptionFilter | undefined = undefined; // also a type
    assert.equal(typed, undefined);
  });

  it("SafeExceptionFilter is marked @deprecated with the new name", () => {
    const url = new URL("../../../safe_response/nest/deprecated_names.ts", import.meta.url);
    assert.match(
      readFileSync(url, "utf8"),
      /@deprecated Use `SafeResponseFilter`[^]*?export const SafeExceptionFilter\b/,
    );
  });
});
