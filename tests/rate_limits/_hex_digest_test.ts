import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { hexDigest } from "../../rate_limits/_hex_digest.ts";

describe("rate_limits/_hex_digest.ts", () => {
  it("answers the hex SHA-1 and SHA-256 of a text's UTF-8 (known vectors, and node:crypto's)", async () => {
    assert.equal(await hexDigest("SHA-1", "abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
    assert.equal(
      await hexDigest("SHA-256", "abc"),
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    );
    const text = "clé 🔑";
    assert.equal(
      await hexDigest("SHA-256", text),
      createHash("sha256").update(Buffer.from(text, "utf8")).digest("hex"),
    );
  });
});
