import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { newRecordId, uuidV7 } from "../../api_keys/_uuid_v7.ts";

describe("uuidV7", () => {
  it("is an RFC 9562 version 7 UUID carrying the time in its first 48 bits", () => {
    const now = Date.UTC(2030, 0, 1);
    const id = uuidV7(now);
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(parseInt(id.replace(/-/g, "").slice(0, 12), 16), now);
  });

  it("orders by time, and differs within one millisecond", () => {
    assert.ok(uuidV7(1_000) < uuidV7(2_000));
    const ids = new Set(Array.from({ length: 1_000 }, () => uuidV7(5_000)));
    assert.equal(ids.size, 1_000);
  });
});

describe("newRecordId", () => {
  it("calls the idFactory option, or makes a UUIDv7 without it", () => {
    assert.equal(newRecordId(() => "k-1"), "k-1");
    assert.match(newRecordId(undefined), /^[0-9a-f]{8}-[0-9a-f]{4}-7/);
  });

  it("refuses a factory answering anything but a key id (keyIdProblem): a TypeError naming the option", () => {
    const answers: [unknown, RegExp][] = [
      ["", /1 to 200 characters/],
      [42, /1 to 200 characters/],
      [undefined, /1 to 200 characters/],
      ["x".repeat(201), /1 to 200 characters/],
      ["a\0b", /control characters/],
      ["line\nbreak", /control characters/],
      ["old-\ud800", /lone surrogate/],
    ];
    for (const [answer, problem] of answers) {
      assert.throws(() => newRecordId(() => answer as string), (error: Error) => {
        assert.equal(error.name, "TypeError");
        assert.match(error.message, /^ApiKeysServiceOptions\.idFactory: the id must /);
        assert.match(error.message, problem);
        return true;
      }, JSON.stringify(answer));
    }
    assert.equal(newRecordId(() => "x".repeat(200)), "x".repeat(200));
  });
});
