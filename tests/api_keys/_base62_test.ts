import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { BASE62_ALPHABET, encodeBase62Fixed, randomBase62 } from "../../api_keys/_base62.ts";

describe("base62", () => {
  it("has 62 distinct characters: digits, then upper, then lower case", () => {
    assert.equal(new Set(BASE62_ALPHABET).size, 62);
    assert.match(BASE62_ALPHABET, /^0123456789A[A-Z]*Za[a-z]*z$/);
  });

  it("encodes 32-bit values in a fixed width, most significant first", () => {
    assert.equal(encodeBase62Fixed(0, 6), "000000");
    assert.equal(encodeBase62Fixed(61, 2), "0z");
    assert.equal(encodeBase62Fixed(62, 2), "10");
    assert.equal(encodeBase62Fixed(0xffffffff, 6), "4gfFC3");
  });

  it("draws every character of the alphabet, and only those, at the length asked", () => {
    const text = randomBase62(20_000);
    assert.equal(text.length, 20_000);
    const counts = new Map<string, number>();
    for (const char of text) counts.set(char, (counts.get(char) ?? 0) + 1);
    assert.deepEqual([...counts.keys()].sort(), [...BASE62_ALPHABET].sort());
    // Rejection sampling: each character near 20,000 / 62 ≈ 323 (a modulo bias would skew it).
    for (const count of counts.values()) assert.ok(count > 200 && count < 460, String(count));
  });
});
