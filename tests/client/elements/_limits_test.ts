import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import {
  firstCodePoints,
  fitsCodePoints,
  MAX_API_KEY_NAME_LENGTH,
} from "../../../client/elements/_limits.ts";
import * as keyName from "../../../api_keys/_key_name.ts";
import * as types from "../../../api_keys/types.ts";

const read = (name: string) =>
  readFileSync(new URL(`../../../client/elements/${name}`, import.meta.url), "utf8");

describe("client/elements/_limits.ts", () => {
  it("is the one home of the name and search bound: the server's rule reads this constant", () => {
    assert.equal(MAX_API_KEY_NAME_LENGTH, 200);
    assert.equal(types.MAX_API_KEY_NAME_LENGTH, MAX_API_KEY_NAME_LENGTH);
    assert.match(read("../../api_keys/types.ts"), /from "\.\.\/client\/elements\/_limits\.ts"/);
    assert.equal(keyName.fitsCodePoints, fitsCodePoints, "the server counts code points with it");
  });

  it("fitsCodePoints counts code points, as the OpenAPI document's maxLength does", () => {
    assert.equal(
      fitsCodePoints("🔑".repeat(MAX_API_KEY_NAME_LENGTH), MAX_API_KEY_NAME_LENGTH),
      true,
    );
    assert.equal(
      fitsCodePoints("🔑".repeat(MAX_API_KEY_NAME_LENGTH) + "n", MAX_API_KEY_NAME_LENGTH),
      false,
    );
    assert.equal(
      fitsCodePoints("n".repeat(MAX_API_KEY_NAME_LENGTH + 1), MAX_API_KEY_NAME_LENGTH),
      false,
    );
  });

  it("firstCodePoints keeps a text's first code points, never half of one", () => {
    const max = MAX_API_KEY_NAME_LENGTH;
    assert.equal(firstCodePoints("🔑".repeat(max + 1), max), "🔑".repeat(max));
    assert.equal(firstCodePoints("n".repeat(max + 40), max), "n".repeat(max));
    assert.equal(firstCodePoints("🔑".repeat(150), max), "🔑".repeat(150));
    assert.equal(firstCodePoints("", max), "");
  });

  it("imports nothing (the server takes no browser code with it); the fields bound by it", () => {
    assert.doesNotMatch(read("_limits.ts"), /^\s*(import|export .* from)/m);
    // The fields count code points; `maxlength` (UTF-16 units) stops only past two each.
    assert.match(read("_toolbar.ts"), /maxlength: String\(2 \* MAX_API_KEY_NAME_LENGTH\)/);
    assert.match(read("_toolbar.ts"), /firstCodePoints\(.*, MAX_API_KEY_NAME_LENGTH\)/);
    assert.match(read("_dialogs.ts"), /maxlength: String\(2 \* MAX_API_KEY_NAME_LENGTH\)/);
    assert.match(read("_dialogs.ts"), /fitsCodePoints\(input\.value, MAX_API_KEY_NAME_LENGTH\)/);
    for (const name of ["_toolbar.ts", "_dialogs.ts"]) {
      assert.doesNotMatch(read(name), /maxlength: "\d+"/, name);
    }
  });
});
