import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { SafeExceptionFilter } from "../../../safe_response/nest/deprecated_names.ts";
import * as nest from "../../../safe_response/nest/mod.ts";
import { SafeResponseFilter } from "../../../safe_response/nest/safe_response.filter.ts";

describe("deprecated names of @nestarc/safe-response (./safe-response/nest)", () => {
  it("SafeExceptionFilter is the filter SafeResponseModule installs", () => {
    assert.equal(SafeExceptionFilter, SafeResponseFilter);
    assert.equal(nest.SafeExceptionFilter, SafeResponseFilter); // exported by the entry
    const typed: SafeExceptionFilter | undefined = undefined; // also a type
    assert.equal(typed, undefined);
  });

  it("SafeExceptionFilter is marked @deprecated with the new name", () => {
    const url = new URL("../../../safe_response/nest/deprecated_names.ts", import.meta.url);
    const source = readFileSync(url, "utf8");
    for (const kind of ["interface", "const"]) {
      assert.match(
        source,
        new RegExp(
          `@deprecated Use \`SafeResponseModule\`[^]*?\`SafeResponseFilter\`[^]*?export ${kind} SafeExceptionFilter\\b`,
        ),
      );
    }
  });
});
