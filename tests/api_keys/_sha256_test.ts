import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { sha256, sha256Blocks } from "../../api_keys/_sha256.ts";

const hex = (bytes: Uint8Array) =>
  Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");

describe("sha256 (synchronous, plain JavaScript)", () => {
  it("equals Web Crypto's SHA-256 for every length from 0 to 300 bytes, split anywhere", async () => {
    for (let length = 0; length <= 300; length++) {
      const message = crypto.getRandomValues(new Uint8Array(length));
      const expected = hex(new Uint8Array(await crypto.subtle.digest("SHA-256", message)));
      const split = length === 0 ? 0 : (length * 7) % length;
      assert.equal(hex(sha256(message.subarray(0, split), message.subarray(split))), expected);
    }
  });

  it("matches the FIPS 180-4 examples, whatever extra blocks minBlocks asks for", () => {
    const abc = new TextEncoder().encode("abc");
    const expected = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    for (const minBlocks of [0, 1, 2, 5]) {
      assert.equal(hex(sha256(abc, new Uint8Array(0), minBlocks)), expected);
    }
    const two = new TextEncoder().encode(
      "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
    );
    assert.equal(
      hex(sha256(two, new Uint8Array(0))),
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
    );
  });

  it("counts blocks like the padding does", () => {
    assert.deepEqual([0, 55, 56, 119, 120].map(sha256Blocks), [1, 1, 2, 2, 3]);
  });
});
