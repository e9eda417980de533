/** The bounded reader of the change log's rows and of the change counter. */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { FeedError, parseCounter, parseLoggedChange } from "../../../api_keys/postgres/_notice.ts";

const PREFIX_A = "AbCdEfGhIjKl";

describe("parseLoggedChange (a row of the change log)", () => {
  it("reads the trigger's rows", () => {
    assert.deepEqual(parseLoggedChange({ n: "12", kind: "revoked", prefix: PREFIX_A }), {
      counter: 12,
      kind: "revoked",
      prefix: PREFIX_A,
    });
    assert.deepEqual(parseLoggedChange({ n: "3", kind: "truncated", prefix: null }), {
      counter: 3,
      kind: "truncated",
      prefix: null,
    });
  });

  it("reads an unknown kind or a bad prefix as a change without a prefix (a reset)", () => {
    const unnamed = [
      { n: "4", kind: "updated", prefix: null },
      { n: "4", kind: "used", prefix: PREFIX_A },
      { n: "4", kind: 7, prefix: PREFIX_A },
      { n: "4", kind: "created", prefix: 7 },
      { n: "4", kind: "created", prefix: "p".repeat(65) },
    ];
    for (const row of unnamed) {
      assert.equal(parseLoggedChange(row).prefix, null, JSON.stringify(row));
    }
  });

  it("throws for a counter that is not a safe integer's text", () => {
    for (const n of [null, 4, "-1", "9999999999999999"]) {
      assert.throws(() => parseLoggedChange({ n, kind: "created", prefix: PREFIX_A }), FeedError);
    }
  });

  it("reads the counter's text and rejects anything but a safe integer", () => {
    assert.equal(parseCounter("0"), 0);
    assert.equal(parseCounter("999999999999999"), 999_999_999_999_999);
    for (const text of ["", "-1", "01", "1.0", "1e3", "9999999999999999", 5, null]) {
      assert.throws(() => parseCounter(text), FeedError, String(text));
    }
  });
});
