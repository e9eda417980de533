import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { sha256 } from "@noble/hashes/sha2";
import { loadedSha256, loadSha256 } from "../../api_keys/_sha256.ts";

describe("api_keys/_sha256.ts", () => {
  it("loads @noble/hashes' SHA-256 on the first call only, then answers it synchronously", async () => {
    assert.equal(loadedSha256(), undefined, "nothing loaded at import");
    const first = loadSha256();
    assert.equal(loadSha256(), first, "one load");
    const loaded = await first;
    assert.equal(loaded, sha256);
    assert.equal(loadedSha256(), sha256);
    assert.deepEqual(loaded(new Uint8Array(0)), sha256(new Uint8Array(0)));
  });
});
