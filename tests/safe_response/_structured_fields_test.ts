/**
 * The RFC 9651 parser on the RFC's own rules: what parses, to what, and what
 * is a parse error (the field is then ignored).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  MAX_FIELD_LENGTH,
  parseDictionary,
  parseList,
} from "../../safe_response/_structured_fields.ts";

const bare = (text: string) => {
  const members = parseList(text);
  assert.ok(members !== undefined && members.length === 1 && members[0].items === undefined, text);
  return members[0].item;
};

describe("RFC 9651 structured fields", () => {
  it("parses every bare item type", () => {
    assert.deepEqual(bare("42"), { type: "integer", value: 42 });
    assert.deepEqual(bare("-999999999999999"), { type: "integer", value: -999999999999999 });
    assert.deepEqual(bare("4.5"), { type: "decimal", value: 4.5 });
    assert.deepEqual(bare("-123456789012.123"), { type: "decimal", value: -123456789012.123 });
    assert.deepEqual(bare('"a \\"b\\" \\\\c"'), { type: "string", value: 'a "b" \\c' });
    assert.deepEqual(bare("*foo/bar:baz"), { type: "token", value: "*foo/bar:baz" });
    assert.deepEqual(bare(":cHJldGVuZA==:"), { type: "bytes", value: "cHJldGVuZA==" });
    assert.deepEqual(bare("?1"), { type: "boolean", value: true });
    assert.deepEqual(bare("@1659578233"), { type: "date", value: 1659578233 });
    assert.deepEqual(bare('%"f%c3%bc%c3%bc"'), { type: "display", value: "füü" });
  });

  it("parses lists with parameters, inner lists and several field lines", () => {
    const members = parseList(' "burst";r=50; t=30 ,\t("a" "b");x, tok;flag , 1');
    assert.ok(members !== undefined);
    assert.equal(members.length, 4);
    assert.deepEqual([...members[0].params], [["r", { type: "integer", value: 50 }], [
      "t",
      { type: "integer", value: 30 },
    ]]);
    assert.equal(members[1].items?.length, 2);
    assert.deepEqual(members[2].params.get("flag"), { type: "boolean", value: true });
    assert.deepEqual(parseList(""), []);
    // A repeated parameter keeps its last value.
    assert.deepEqual(parseList("a;r=1;r=2")?.[0].params.get("r"), { type: "integer", value: 2 });
  });

  it("parses dictionaries; a repeated key keeps its last value", () => {
    const dictionary = parseDictionary("limit=100, remaining=50;w=1, reset=30, flag, limit=7");
    assert.ok(dictionary !== undefined);
    assert.deepEqual([...dictionary.keys()], ["limit", "remaining", "reset", "flag"]);
    assert.deepEqual(dictionary.get("limit"), {
      item: { type: "integer", value: 7 },
      params: new Map(),
    });
    assert.deepEqual(dictionary.get("flag"), {
      item: { type: "boolean", value: true },
      params: new Map(),
    });
  });

  it("fails on what RFC 9651 rejects", () => {
    for (
      const text of [
        "1.",
        "1.1234",
        "1234567890123.0",
        "1234567890123456",
        "-",
        "- 1",
        '"unterminated',
        '"bad \\x escape"',
        '"tab\tinside"',
        '"é"',
        "(1 2",
        '("a""b")',
        "a, ",
        "a,,b",
        "a b",
        "?2",
        ":not base64!:",
        ":unterminated",
        "@1.5",
        '%"%C3%BC"',
        '%"%ff"',
        "1;A=1",
        "1 ;a=1",
        "\ta",
        "é",
        "[",
      ]
    ) {
      assert.equal(parseList(text), undefined, text);
    }
    assert.equal(parseDictionary("Limit=1"), undefined);
    assert.equal(parseDictionary('"burst";r=1'), undefined);
    assert.equal(parseDictionary("a=1,"), undefined);
  });

  it("refuses values over the length bound without reading them", () => {
    assert.equal(parseList("a".repeat(MAX_FIELD_LENGTH + 1)), undefined);
    assert.deepEqual(parseList("a".repeat(MAX_FIELD_LENGTH))?.length, 1);
  });
});
