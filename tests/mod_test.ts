import { describe, it } from "node:test";
import assert from "node:assert/strict";
import * as root from "../mod.ts";
import * as apiKeys from "../api_keys/mod.ts";
import * as safeResponse from "../safe_response/mod.ts";

describe("root entry point", () => {
  it("re-exports every runtime export of both framework-free cores", () => {
    const rootNames = new Set(Object.keys(root));
    const coreNames = [...Object.keys(apiKeys), ...Object.keys(safeResponse)];
    assert.deepEqual(coreNames.filter((name) => !rootNames.has(name)), []);
    assert.equal(rootNames.size, new Set(coreNames).size);
  });

  it("exports the same bindings, not copies", () => {
    assert.equal(root.ApiKeysService, apiKeys.ApiKeysService);
    assert.equal(root.buildSuccessBody, safeResponse.buildSuccessBody);
  });
});
