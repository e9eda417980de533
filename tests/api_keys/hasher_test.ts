import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Sha256Hasher } from "../../api_keys/hasher.ts";
import { PEPPER_1, PEPPER_2 } from "./helpers.ts";

describe("Sha256Hasher", () => {
  it("hashes with the current pepper and verifies in constant time", async () => {
    const hasher = new Sha256Hasher({ peppers: { 1: PEPPER_1 } });
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
    const a = await new Sha256Hasher({ peppers: { 1: PEPPER_1 } }).hash("x");
    const b = await new Sha256Hasher({ peppers: { 1: PEPPER_2 } }).hash("x");
    assert.notEqual(a.hash, b.hash);
  });

  it("defaults to the highest version, parses string keys and keeps old versions verifying", async () => {
    const v1 = new Sha256Hasher({ peppers: { 1: PEPPER_1 } });
    const old = await v1.hash("secret");
    const both = new Sha256Hasher({ peppers: { "1": PEPPER_1, "2": PEPPER_2 } });
    assert.equal(both.currentVersion, 2);
    assert.equal((await both.hash("secret")).pepperVersion, 2);
    assert.equal(await both.verify("secret", old.hash, 1), true);
    const retired = new Sha256Hasher({ peppers: { 2: PEPPER_2 } });
    assert.equal(await retired.verify("secret", old.hash, 1), false);
    const pinned = new Sha256Hasher({ peppers: { 1: PEPPER_1, 2: PEPPER_2 }, currentVersion: 1 });
    assert.equal((await pinned.hash("s")).pepperVersion, 1);
  });

  it("fails fast on bad configuration, naming the problem", () => {
    assert.throws(() => new Sha256Hasher({ peppers: { 1: "short" } }), /version 1 .*32 bytes/);
    assert.throws(() => new Sha256Hasher({ peppers: {} }), /at least one pepper/);
    assert.throws(
      () => new Sha256Hasher({ peppers: { 0: PEPPER_1 } }),
      /"0" is not a positive integer/,
    );
    assert.throws(
      () => new Sha256Hasher({ peppers: { "1.5": PEPPER_1 } as Record<number, string> }),
      /not a positive integer/,
    );
    assert.throws(
      () => new Sha256Hasher({ peppers: { 1: PEPPER_1 }, currentVersion: 3 }),
      /currentVersion 3 has no pepper/,
    );
    try {
      new Sha256Hasher({ peppers: { 1: "short-pepper-value" } });
    } catch (error) {
      assert.equal((error as Error).message.includes("short-pepper-value"), false);
    }
  });
});
