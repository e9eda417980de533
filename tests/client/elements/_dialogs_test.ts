import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as dialogs from "../../../client/elements/_dialogs.ts";

const source = readFileSync(
  new URL("../../../client/elements/_dialogs.ts", import.meta.url),
  "utf8",
);

describe("client/elements/_dialogs.ts", () => {
  it("exports the four dialogs' fields", () => {
    assert.deepEqual(Object.keys(dialogs).sort(), [
      "createFields",
      "renameFields",
      "revokeFields",
      "rotateFields",
    ]);
  });

  it("defaults come from the server's config, never hard-coded presets", () => {
    assert.match(source, /config\.defaultExpiry/);
    assert.match(source, /config\.defaultGrace/);
    assert.doesNotMatch(source, /"never"\)|"24h"\)/);
    assert.doesNotMatch(source, /innerHTML|insertAdjacentHTML/, "text goes in as text");
  });
});
