import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { createHasher, fromBase64Url, WebCryptoSha256Hasher } from "../../api_keys/hasher.ts";
import { Sha256Hasher } from "../../api_keys/sha256_hasher.ts";
import { SEED } from "../reliability/hostile_inputs.ts";
import { PEPPER_1, PEPPER_2 } from "./helpers.ts";

describe("Sha256Hasher (the spec's: synchronous)", () => {
  const hasher = new Sha256Hasher({ peppers: { 1: PEPPER_1, 2: PEPPER_2 }, currentVersion: 2 });

  it("answers values, not promises: code written from the spec throws on a wrong secret", () => {
    const hashed = hasher.hash("s3cret");
    assert.deepEqual(Object.keys(hashed).sort(), ["hash", "pepperVersion"]);
    assert.equal(hashed.pepperVersion, 2);
    assert.equal(hasher.verify("s3cret", hashed.hash, 2), true);
    for (const verdict of [hasher.verify("wrong", hashed.hash, 2), hasher.dummyVerify("s3cret")]) {
      assert.equal(verdict, false);
    }
    const check = (secret: string) => {
      if (!hasher.verify(secret, hashed.hash, hashed.pepperVersion)) throw new Error("denied");
    };
    check("s3cret");
    assert.throws(() => check("s3cres"), /denied/);
    assert.equal(hasher.verify("s3cret", hashed.hash, 1), false, "another version");
    assert.equal(hasher.verify("s3cret", hashed.hash, 7), false, "an unknown version");
    assert.equal(hasher.verify("s3cret", "not-a-hash", 2), false, "a malformed hash");
    assert.equal(hasher.currentVersion, 2);
  });

  it("secrets differing only in a lone surrogate hash apart (WTF-8 bytes: U+FFFD is not their stand-in); well-formed text hashes as UTF-8", async () => {
    const web = new WebCryptoSha256Hasher({
      peppers: { 1: PEPPER_1, 2: PEPPER_2 },
      currentVersion: 2,
    });
    const secrets = [
      "secret\uD800",
      "secret\uDFFF",
      "secret\uFFFD",
      "secret\uD800\uDC00",
      "secret",
    ];
    const hashes = secrets.map((secret) => hasher.hash(secret).hash);
    assert.equal(new Set(hashes).size, secrets.length, "every secret its own hash");
    for (const [i, secret] of secrets.entries()) {
      assert.equal((await web.hash(secret)).hash, hashes[i], "the two hashers agree");
      for (const [j, other] of secrets.entries()) {
        assert.equal(hasher.verify(other, hashes[i], 2), i === j, `${i} vs ${j}`);
        assert.equal(await web.verify(other, hashes[i], 2), i === j, `web ${i} vs ${j}`);
      }
    }
    const utf8 = new TextEncoder().encode("sécret \u{1F511}");
    const { hmac } = await import("@noble/hashes/hmac");
    const { sha256 } = await import("@noble/hashes/sha2");
    assert.deepEqual(
      fromBase64Url(hasher.hash("sécret \u{1F511}").hash),
      hmac(sha256, new TextEncoder().encode(PEPPER_2), utf8),
    );
  });

  it("validates its options like the Web Crypto hasher, naming the problem", () => {
    assert.throws(() => new Sha256Hasher({ peppers: { 1: "short" } }), /version 1 .*32 bytes/);
    assert.throws(() => new Sha256Hasher({ peppers: {} }), /at least one pepper/);
    assert.throws(
      () =>
        new Sha256Hasher({
          peppers: new Map([[1, PEPPER_1]]) as unknown as Record<number, string>,
        }),
      /peppers must be a plain object \(\{ 1: pepper \}\), not a Map/,
      'a Map (the spec\'s "map of number to string" read literally) is named, not read as empty',
    );
    assert.throws(
      () => new Sha256Hasher({ peppers: { 1: PEPPER_1 }, currentVersion: 3 }),
      /^TypeError: HasherOptions\.currentVersion 3 has no pepper/,
    );
  });

  it("makes the Web Crypto hasher's hashes and verdicts over random secrets, peppers and versions", async () => {
    const pepper = fc.string({ minLength: 32, maxLength: 80, unit: "grapheme" });
    await fc.assert(
      fc.asyncProperty(
        fc.string({ maxLength: 64, unit: "grapheme" }),
        fc.string({ maxLength: 64 }),
        fc.dictionary(fc.integer({ min: 1, max: 9 }).map(String), pepper, { minKeys: 1 }),
        fc.integer({ min: 0, max: 10 }),
        async (secret, other, peppers, probe) => {
          const sync = new Sha256Hasher({ peppers });
          const web = new WebCryptoSha256Hasher({ peppers });
          const hashed = sync.hash(secret);
          assert.deepEqual(hashed, await web.hash(secret));
          for (const version of [hashed.pepperVersion, probe]) {
            for (const [s, h] of [[secret, hashed.hash], [other, hashed.hash], [secret, other]]) {
              assert.equal(sync.verify(s, h, version), await web.verify(s, h, version));
            }
          }
          assert.equal(sync.dummyVerify(secret), await web.dummyVerify(secret));
        },
      ),
      { seed: SEED, numRuns: 300 },
    );
  });
});

describe("Sha256Hasher given as the service's hasher", () => {
  it("lends createHasher its validated peppers and current version (no other object does)", async () => {
    const labels = { peppers: "p", currentVersion: "v", hasher: "h" };
    const sync = new Sha256Hasher({ peppers: { 1: PEPPER_1, 2: PEPPER_2 }, currentVersion: 1 });
    const service = createHasher({ peppers: undefined, hasher: sync }, labels);
    assert.equal(service.currentVersion, 1);
    const hashed = sync.hash("s3cret");
    assert.deepEqual(await service.hash("s3cret"), hashed);
    assert.equal(await service.verify("s3cret", hashed.hash, 1), true);
    assert.throws(
      () => createHasher({ peppers: undefined, hasher: { currentVersion: 1 } }, labels),
      /^TypeError: h must be a Sha256Hasher/,
    );
  });
});
