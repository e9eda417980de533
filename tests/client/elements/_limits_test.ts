import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { MAX_API_KEY_NAME_LENGTH } from "../../../client/elements/_limits.ts";
import * as types from "../../../api_keys/types.ts";

const read = (name: string) =>
  readFileSync(new URL(`../../../client/elements/${name}`, import.meta.url), "utf8");

describe("client/elements/_limits.ts", () => {
  it("is the one home of the name and search bound: the server's rule reads this constant", () => {
    assert.equal(MAX_API_KEY_NAME_LENGTH, 200);
    assert.equal(types.MAX_API_KEY_NAME_LENGTH, MAX_API_KEY_NAME_LENGTH);
    assert.match(read("../../api_keys/types.ts"), /from "\.\.\/client\/elements\/_limits\.ts"/);
  });

  it("imports nothing (the server takes no browser code with it); the fields bound by it", () => {
    assert.doesNotMatch(read("_limits.ts"), /^\s*(import|export .* from)/m);
    for (const name of ["_toolbar.ts", "_dialogs.ts"]) {
      assert.match(read(name), /maxlength: String\(MAX_API_KEY_NAME_LENGTH\)/, name);
      assert.doesNotMatch(read(name), /maxlength: "\d+"/, name);
    }
  });
});
