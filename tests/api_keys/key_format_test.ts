import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  API_KEY_REDACT_REGEX,
  crc32Ascii,
  generateKey,
  hasApiKeyLayout,
  MAX_API_KEY_LENGTH,
  parseKey,
  redactApiKeys,
} from "../../api_keys/key_format.ts";
import { BASE62_ALPHABET } from "../../api_keys/_base62.ts";

describe("key format", () => {
  it("generates 10,000 keys of the documented layout with uniform base62 characters", () => {
    const counts = new Map<string, number>();
    let total = 0;
    const prefixes = new Set<string>();
    for (let i = 0; i < 10_000; i++) {
      const key = generateKey({ environment: "live" });
      assert.match(key.raw, /^ak_live_[0-9A-Za-z]{12}_[0-9A-Za-z]{38}$/);
      assert.equal(key.raw.length, 2 + 1 + 4 + 1 + 12 + 1 + 38);
      assert.equal(key.secret.length, 32);
      assert.ok(32 * Math.log2(62) >= 160, "secret entropy");
      prefixes.add(key.prefix);
      for (const char of key.prefix + key.secret) {
        counts.set(char, (counts.get(char) ?? 0) + 1);
        total++;
      }
    }
    assert.equal(prefixes.size, 10_000);
    assert.equal(counts.size, 62);
    for (const char of counts.keys()) assert.ok(BASE62_ALPHABET.includes(char));
    const expected = total / 62; // 7,097 per character
    for (const [char, count] of counts) {
      // about 84 standard deviations; a modulo-biased generator would sit ~3% off
      assert.ok(Math.abs(count - expected) < expected * 0.1, `${char}: ${count} vs ${expected}`);
    }
  });

  it("round-trips through parseKey with every documented field", () => {
    const key = generateKey({ environment: "test", namespace: "acme2" });
    assert.deepEqual(parseKey(key.raw), key);
    assert.equal(key.namespace, "acme2");
    assert.equal(key.environment, "test");
  });

  it("computes CRC-32 like zlib", () => {
    assert.equal(crc32Ascii("123456789"), 0xcbf43926);
  });

  it("rejects a changed character, bad checksum and garbage without throwing", () => {
    const { raw } = generateKey({ environment: "live" });
    const last = raw.at(-1) === "a" ? "b" : "a";
    assert.equal(parseKey(raw.slice(0, -1) + last), null);
    const mid = 20;
    const swapped = raw.slice(0, mid) + (raw[mid] === "x" ? "y" : "x") + raw.slice(mid + 1);
    assert.equal(parseKey(swapped), null);
    for (
      const junk of ["", "ak", "ak_live_", "x".repeat(10_000), "AK_live_" + raw.slice(8), "\u0000"]
    ) {
      assert.equal(parseKey(junk), null);
    }
    assert.equal(parseKey(undefined as unknown as string), null);
    assert.equal(parseKey(42 as unknown as string), null);
  });

  it("treats inputs longer than the longest valid key as malformed", () => {
    const longest = generateKey({ environment: "live", namespace: "a".repeat(16) }).raw;
    assert.equal(longest.length, MAX_API_KEY_LENGTH);
    assert.notEqual(parseKey(longest), null);
    assert.equal(parseKey(longest + "0"), null);
    assert.equal(hasApiKeyLayout(longest + "0"), false);
  });

  it("validates namespaces", () => {
    for (const bad of ["", "Ak", "1ak", "a_b", "a".repeat(17), "ak-1"]) {
      assert.throws(() => generateKey({ environment: "live", namespace: bad }), TypeError);
    }
    assert.throws(
      () => generateKey({ environment: "prod" as "live" }),
      /environment must be "live" or "test"/,
    );
  });

  it("hasApiKeyLayout checks the shape only", () => {
    const { raw } = generateKey({ environment: "live" });
    assert.equal(hasApiKeyLayout(raw), true);
    assert.equal(hasApiKeyLayout(raw.slice(0, -1) + (raw.at(-1) === "a" ? "b" : "a")), true);
    assert.equal(hasApiKeyLayout("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig"), false);
  });

  it("API_KEY_REDACT_REGEX is stateless and redactApiKeys replaces every key", () => {
    assert.equal(API_KEY_REDACT_REGEX.flags.includes("g"), false);
    const a = generateKey({ environment: "live" }).raw;
    const b = generateKey({ environment: "test", namespace: "other9" }).raw;
    const text = `first=${a} second "${b}".`;
    for (let i = 0; i < 3; i++) assert.equal(API_KEY_REDACT_REGEX.test(text), true);
    const redacted = redactApiKeys(text);
    assert.equal(redacted, 'first=[REDACTED_API_KEY] second "[REDACTED_API_KEY]".');
    assert.equal(API_KEY_REDACT_REGEX.test(redacted), false);
  });
});
