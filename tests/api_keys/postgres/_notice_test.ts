/** The bounded reader of the PostgreSQL trigger's notices and of the change counter. */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { FeedError, parseCounter, parseNotice } from "../../../api_keys/postgres/_notice.ts";

const PREFIX_A = "AbCdEfGhIjKl";

describe("parseNotice (the PostgreSQL trigger's payload)", () => {
  it("reads the trigger's JSON, spaces included", () => {
    assert.deepEqual(
      parseNotice(`{"n" : 12, "kind" : "revoked", "prefix" : "${PREFIX_A}"}`),
      { counter: 12, kind: "revoked", prefix: PREFIX_A },
    );
    assert.deepEqual(parseNotice('{"n":3,"kind":"truncated","prefix":null}'), {
      counter: 3,
      kind: "truncated",
      prefix: null,
    });
    assert.deepEqual(parseNotice('{"n":4,"kind":"updated","prefix":null}'), {
      counter: 4,
      kind: "updated",
      prefix: null,
    });
  });

  it("rejects anything else", () => {
    const rejected: unknown[] = [
      undefined,
      42,
      "",
      "not json",
      "[1,2]",
      "null",
      '{"n":"1","kind":"created","prefix":"p"}',
      '{"n":0,"kind":"created","prefix":"p"}',
      '{"n":1.5,"kind":"created","prefix":"p"}',
      '{"n":9007199254740993,"kind":"created","prefix":"p"}',
      '{"n":1,"kind":"used","prefix":"p"}',
      '{"n":1,"kind":"reset","prefix":null}',
      '{"n":1,"kind":"truncated","prefix":"p"}',
      '{"n":1,"kind":"created","prefix":7}',
      `{"n":1,"kind":"created","prefix":"${"p".repeat(65)}"}`,
      `{"n":1,"kind":"created","prefix":"p","pad":"${" ".repeat(2_000)}"}`,
    ];
    for (const payload of rejected) assert.equal(parseNotice(payload), undefined, String(payload));
  });

  it("reads the counter's text and rejects anything but a safe integer", () => {
    assert.equal(parseCounter("0"), 0);
    assert.equal(parseCounter("999999999999999"), 999_999_999_999_999);
    for (const text of ["", "-1", "01", "1.0", "1e3", "9999999999999999", 5, null]) {
      assert.throws(() => parseCounter(text), FeedError, String(text));
    }
  });
});
