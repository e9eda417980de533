import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { reveal } from "../../../client/elements/_reveal.ts";

const source = readFileSync(
  new URL("../../../client/elements/_reveal.ts", import.meta.url),
  "utf8",
);

describe("client/elements/_reveal.ts", () => {
  it("is a function of the secret; the secret lives in its closure only, dropped on close", () => {
    assert.equal(typeof reveal, "function");
    assert.match(source, /drop: \(\) => \{\n\s+kept = null;/);
    assert.doesNotMatch(source, /localStorage|sessionStorage|console\.|innerHTML/);
  });

  it("the copy feedback is a role=status inside the dialog's content", () => {
    assert.match(source, /role: "status"/);
    assert.match(source, /content: \[[^]*message,/);
  });
});
