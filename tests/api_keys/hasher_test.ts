import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { sha256 } from "@noble/hashes/sha2";
import {
  createHasher,
  DUMMY_HASH,
  fromBase64Url,
  isWellFormedHash,
  keysImported,
  loadedSha256,
  loadSha256,
  toBase64Url,
  WebCryptoSha256Hasher,
} from "../../api_keys/hasher.ts";
import { PEPPER_1, PEPPER_2 } from "./helpers.ts";
import { nestarcHash, plainSha256 } from "./verify/nestarc.ts";

// First: nothing has loaded SHA-256 in this process yet.
describe("loadSha256 (the SHA-256 of the legacy schemes and long counter subjects)", () => {
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

/** Records `crypto.subtle.verify` calls: key and byte lengths. */
function spyVerify() {
  const original = crypto.subtle.verify;
  const calls: { key: CryptoKey; signature: number; data: number }[] = [];
  crypto.subtle.verify = function (algorithm, key, signature, data) {
    calls.push({
      key,
      signature: (signature as ArrayBufferView).byteLength,
      data: (data as ArrayBufferView).byteLength,
    });
    return original.call(crypto.subtle, algorithm, key, signature, data);
  } as typeof original;
  return { calls, restore: () => (crypto.subtle.verify = original) };
}

describe("WebCryptoSha256Hasher", () => {
  it("DUMMY_HASH (written out, not computed at import) is the base64url of 32 zero bytes, a well-formed hash", () => {
    assert.equal(DUMMY_HASH, toBase64Url(new Uint8Array(32)));
    assert.deepEqual(fromBase64Url(DUMMY_HASH), new Uint8Array(32));
    assert.equal(isWellFormedHash("hmac-sha256", DUMMY_HASH), true);
  });

  it("hashes with the current pepper and verifies in constant time", async () => {
    const hasher = new WebCryptoSha256Hasher({ peppers: { 1: PEPPER_1 } });
    const hashed = await hasher.hash("s3cret");
    assert.equal(hashed.pepperVersion, 1);
    assert.match(hashed.hash, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(hashed.hash.includes("s3cret"), false);
    assert.equal(await hasher.verify("s3cret", hashed.hash, 1), true);
    assert.equal(await hasher.verify("s3cres", hashed.hash, 1), false);
    assert.equal(await hasher.verify("s3cret", "not-a-hash", 1), false);
    assert.equal(await hasher.dummyVerify("s3cret"), false);
  });

  it("is an HMAC keyed by the pepper", async () => {
    const a = await new WebCryptoSha256Hasher({ peppers: { 1: PEPPER_1 } }).hash("x");
    const b = await new WebCryptoSha256Hasher({ peppers: { 1: PEPPER_2 } }).hash("x");
    assert.notEqual(a.hash, b.hash);
  });

  it("defaults to the highest version, parses string keys and keeps old versions verifying", async () => {
    const v1 = new WebCryptoSha256Hasher({ peppers: { 1: PEPPER_1 } });
    const old = await v1.hash("secret");
    const both = new WebCryptoSha256Hasher({ peppers: { "1": PEPPER_1, "2": PEPPER_2 } });
    assert.equal(both.currentVersion, 2);
    assert.equal((await both.hash("secret")).pepperVersion, 2);
    assert.equal(await both.verify("secret", old.hash, 1), true);
    const retired = new WebCryptoSha256Hasher({ peppers: { 2: PEPPER_2 } });
    assert.equal(await retired.verify("secret", old.hash, 1), false);
    const pinned = new WebCryptoSha256Hasher({
      peppers: { 1: PEPPER_1, 2: PEPPER_2 },
      currentVersion: 1,
    });
    assert.equal((await pinned.hash("s")).pepperVersion, 1);
  });

  it("imports every configured version's key at construction: no verification imports one later (an older version's record costs what an unknown prefix does)", async () => {
    const old = await new WebCryptoSha256Hasher({ peppers: { 1: PEPPER_1 } }).hash("secret");
    const original = crypto.subtle.importKey;
    let imports = 0;
    crypto.subtle.importKey = function (...args: Parameters<typeof original>) {
      imports++;
      return original.apply(crypto.subtle, args);
    } as typeof original;
    try {
      const hasher = new WebCryptoSha256Hasher({
        peppers: { 1: PEPPER_1, 2: PEPPER_2, 3: PEPPER_1 },
      });
      assert.equal(imports, 3);
      await keysImported(hasher);
      assert.equal(await hasher.dummyVerify("secret"), false);
      assert.equal(await hasher.verify("wrong", old.hash, 1), false);
      assert.equal(await hasher.verify("secret", old.hash, 1), true);
      assert.equal((await hasher.hash("secret")).pepperVersion, 3);
      assert.equal(imports, 3, "no key imported after construction");
    } finally {
      crypto.subtle.importKey = original;
    }
  });

  it("keysImported settles once every key is imported, and on a failed import too", async () => {
    const original = crypto.subtle.importKey;
    const pending: (() => void)[] = [];
    crypto.subtle.importKey = function (...args: Parameters<typeof original>) {
      const imported = original.apply(crypto.subtle, args);
      return new Promise<CryptoKey>((resolve, reject) =>
        pending.push(() =>
          pending.length === 0 ? reject(new Error("import failed")) : imported.then(resolve)
        )
      );
    } as typeof original;
    let hasher: WebCryptoSha256Hasher;
    try {
      hasher = new WebCryptoSha256Hasher({ peppers: { 1: PEPPER_1, 2: PEPPER_2 } });
    } finally {
      crypto.subtle.importKey = original;
    }
    let settled = false;
    keysImported(hasher).then(() => settled = true);
    assert.equal(pending.length, 2);
    pending.shift()!(); // version 1 imported
    await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(settled, false, "version 2 is not imported yet");
    pending.shift()!(); // version 2 fails
    await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(settled, true);
    await assert.rejects(hasher.hash("secret"), /import failed/);
    assert.equal(await hasher.verify("wrong", DUMMY_HASH, 1), false);
  });

  it("fails fast on bad configuration, naming the problem", () => {
    assert.throws(
      () => new WebCryptoSha256Hasher({ peppers: { 1: "short" } }),
      /version 1 .*32 bytes/,
    );
    assert.throws(
      () => new WebCryptoSha256Hasher({ peppers: { 1: PEPPER_1, 2: "short" } }),
      /version 2 .*32 bytes/,
      "the current pepper hashes new keys",
    );
    assert.throws(
      () => new WebCryptoSha256Hasher({ peppers: { 1: "", 2: PEPPER_2 } }),
      /version 1 must be a non-empty string/,
    );
    assert.throws(
      () => new WebCryptoSha256Hasher({ peppers: { 1: "" } }),
      /version 1 must be a non-empty string.*at least 32 bytes/,
      'a missing pepper (an unset variable read as "") states the rule',
    );
    assert.throws(() => new WebCryptoSha256Hasher({ peppers: {} }), /at least one pepper/);
    // A lone surrogate encodes as U+FFFD: two different peppers would hash alike.
    for (const pepper of ["x".repeat(31) + "\uD800", "\uDC00".repeat(32)]) {
      assert.throws(
        () => new WebCryptoSha256Hasher({ peppers: { 1: PEPPER_1, 2: pepper } }),
        (error: Error) =>
          error instanceof TypeError && /version 2 is not well-formed text/.test(error.message) &&
          !error.message.includes(pepper),
      );
    }
    assert.throws(
      () => new WebCryptoSha256Hasher({ peppers: { 0: PEPPER_1 } }),
      /"0" is not a positive integer/,
    );
    assert.throws(
      () => new WebCryptoSha256Hasher({ peppers: { "1.5": PEPPER_1 } as Record<number, string> }),
      /not a positive integer/,
    );
    assert.throws(
      () => new WebCryptoSha256Hasher({ peppers: { 1: PEPPER_1 }, currentVersion: 3 }),
      /currentVersion 3 has no pepper/,
    );
    try {
      new WebCryptoSha256Hasher({ peppers: { 1: "short-pepper-value" } });
    } catch (error) {
      assert.equal((error as Error).message.includes("short-pepper-value"), false);
    }
  });

  it("a pepper map the wrong way round (pepper as the key) never shows the pepper", () => {
    const secret = "S3cretPepperValue-0123456789abcdef";
    for (const peppers of [{ [secret]: "1" }, { [`1${secret}`]: PEPPER_1 }]) {
      assert.throws(
        () => new WebCryptoSha256Hasher({ peppers: peppers as Record<number, string> }),
        (error: Error) =>
          /HasherOptions\.peppers has a key that is not a version/.test(error.message) &&
          !error.message.includes(secret),
      );
    }
  });

  it("a missing or short pepper's message says how to make one", () => {
    for (const pepper of ["", "short-pepper-value"]) {
      assert.throws(
        () => new WebCryptoSha256Hasher({ peppers: { 1: pepper } }),
        /HasherOptions\.peppers version 1 .*`openssl rand -base64 32`/,
        JSON.stringify(pepper),
      );
    }
  });

  it("a short current pepper's message says an existing deployment keeps it under its version and adds a new current one", () => {
    const oldPepper = "old-pepper-16byt"; // 0.1's config as kept: one 16-byte pepper, current
    assert.throws(
      () => new WebCryptoSha256Hasher({ peppers: { 1: oldPepper }, currentVersion: 1 }),
      {
        name: "TypeError",
        message: "HasherOptions.peppers version 1 must be a string of at least 32 bytes " +
          "(the current pepper hashes new keys; make one with `openssl rand -base64 32`; " +
          "if this pepper already hashes stored keys, keep it as version 1 and add a new pepper " +
          "as version 2 (HasherOptions.currentVersion: 2))",
      },
    );
    assert.throws(
      () =>
        createHasher({ peppers: { 1: PEPPER_1, 3: oldPepper }, currentVersion: 3 }, {
          peppers: "ApiKeysServiceOptions.peppers",
          currentVersion: "ApiKeysServiceOptions.currentPepperVersion",
          hasher: "ApiKeysServiceOptions.hasher",
        }),
      {
        message:
          /^ApiKeysServiceOptions\.peppers version 3 must be .*keep it as version 3 and add a new pepper as version 4 \(ApiKeysServiceOptions\.currentPepperVersion: 4\)\)$/,
      },
      "the next version is past every configured one, named as the caller names it",
    );
  });
});

it("WebCryptoSha256Hasher: an older pepper under 32 bytes only verifies the hashes made with it", async () => {
  const oldPepper = "old-short-pepper"; // what an earlier deployment may have used
  const old = nestarcHash("secret", oldPepper);
  const hasher = new WebCryptoSha256Hasher({ peppers: { 1: oldPepper, 2: PEPPER_2 } });
  assert.equal(hasher.currentVersion, 2);
  assert.equal(await hasher.verify("secret", old, 1, "sha256-pepper"), true);
  assert.equal((await hasher.hash("secret")).pepperVersion, 2);
  assert.throws(
    () => new WebCryptoSha256Hasher({ peppers: { 1: oldPepper, 2: PEPPER_2 }, currentVersion: 1 }),
    /version 1 .*32 bytes/,
  );
});

describe("WebCryptoSha256Hasher: legacy hash schemes", () => {
  const secret = "Abcdefghijklmnopqrstuvwxyz012345";
  const hasher = new WebCryptoSha256Hasher({ peppers: { 1: PEPPER_1, 2: PEPPER_2 } });

  it("sha256-pepper: lowercase hex SHA-256 of secret + the record's pepper", async () => {
    const hash = nestarcHash(secret, PEPPER_1);
    assert.equal(await hasher.verify(secret, hash, 1, "sha256-pepper"), true);
    assert.equal(await hasher.verify(secret, hash, 2, "sha256-pepper"), false, "other pepper");
    assert.equal(await hasher.verify(secret, hash, 3, "sha256-pepper"), false, "unknown version");
    assert.equal(await hasher.verify(secret + "x", hash, 1, "sha256-pepper"), false);
    assert.equal(await hasher.verify(secret, hash.toUpperCase(), 1, "sha256-pepper"), false);
    assert.equal(await hasher.verify(secret, hash, 1), false, "not an HMAC");
    assert.equal(
      await hasher.verify(secret, nestarcHash(secret, PEPPER_2), 2, "sha256-pepper"),
      true,
    );
  });

  it("sha256: lowercase hex SHA-256 of the secret alone, pepper version 0 only", async () => {
    const hash = plainSha256(secret);
    assert.equal(await hasher.verify(secret, hash, 0, "sha256"), true);
    assert.equal(await hasher.verify(secret, hash, 1, "sha256"), false);
    assert.equal(await hasher.verify(secret.slice(1) + "A", hash, 0, "sha256"), false);
    assert.equal(await hasher.verify(secret, hash.slice(1), 0, "sha256"), false);
  });

  it("an unknown scheme never verifies", async () => {
    const hash = plainSha256(secret);
    assert.equal(await hasher.verify(secret, hash, 0, "md5" as never), false);
  });

  it("each legacy check, passing or failing, makes the HMAC verification of a failed current check", async () => {
    await hasher.dummyVerify(secret);
    const spy = spyVerify();
    try {
      await hasher.dummyVerify(secret);
      await hasher.verify(secret, nestarcHash(secret, PEPPER_1), 1, "sha256-pepper");
      await hasher.verify(secret, "f".repeat(64), 1, "sha256-pepper");
      await hasher.verify(secret, plainSha256(secret), 0, "sha256");
      await hasher.verify(secret, "nope", 9, "sha256");
    } finally {
      spy.restore();
    }
    assert.equal(spy.calls.length, 5);
    for (const call of spy.calls) {
      assert.deepEqual(call, { ...spy.calls[0] });
    }
  });

  it("createHasher with digestOnEveryVerify verifies the same answers", async () => {
    const every = createHasher({ peppers: { 1: PEPPER_1 } }, {
      peppers: "p",
      currentVersion: "c",
      hasher: "h",
    }, true);
    const { hash } = await every.hash(secret);
    assert.equal(await every.verify(secret, hash, 1), true);
    assert.equal(
      await every.verify(secret, nestarcHash(secret, PEPPER_1), 1, "sha256-pepper"),
      true,
    );
    assert.equal(await every.dummyVerify(secret), false);
  });

  it("tells the form of each scheme's hashes, and which records can verify", () => {
    assert.equal(isWellFormedHash("hmac-sha256", "A".repeat(43)), true);
    assert.equal(isWellFormedHash("sha256-pepper", "a".repeat(64)), true);
    assert.equal(isWellFormedHash("sha256", "A".repeat(64)), false);
    assert.equal(hasher.canVerify("sha256", 0), true);
    assert.equal(hasher.canVerify("sha256-pepper", 3), false);
    assert.equal(hasher.canVerify(undefined, 2), true);
  });
});

describe("WebCryptoSha256Hasher: the sha256-pepper scheme is 0.1's digest", () => {
  it("verifies hex SHA-256 of secret + pepper for every length of either, and nothing else", async () => {
    for (let length = 0; length <= 200; length += 7) {
      const secret = "s".repeat(length);
      const pepper = "p".repeat(32 + (length * 3) % 140);
      const short = "q".repeat(length % 20 + 1);
      const hasher = new WebCryptoSha256Hasher({ peppers: { 1: short, 2: pepper } });
      for (const [version, used] of [[1, short], [2, pepper]] as const) {
        const hash = nestarcHash(secret, used);
        assert.equal(await hasher.verify(secret, hash, version, "sha256-pepper"), true);
        assert.equal(await hasher.verify(secret, hash, 3 - version, "sha256-pepper"), false);
        assert.equal(await hasher.verify(`${secret}x`, hash, version, "sha256-pepper"), false);
      }
      assert.equal(await hasher.verify(secret, plainSha256(secret), 0, "sha256"), true);
    }
  });
});
