import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  API_KEY_REDACT_REGEX,
  apiKeyRedactRegex,
  compileKeyLayouts,
  crc32Ascii,
  generateKey,
  hasApiKeyLayout,
  LEGACY_KEY_LAYOUTS,
  type LegacyKeyLayoutDescription,
  MAX_API_KEY_LENGTH,
  parseKey,
  redactApiKeys,
} from "../../api_keys/key_format.ts";
import { BASE62_ALPHABET, encodeBase62Fixed } from "../../api_keys/_base62.ts";
import { nestarcKey } from "./verify/nestarc.ts";

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

  it("a namespace @nestarc/api-keys 0.1 accepted (1 to 32 of A-Za-z0-9) is refused naming the legacy layout spread", () => {
    for (const old of ["Acme", "ACME2", "1ak", "a".repeat(32)]) {
      assert.throws(
        () => generateKey({ environment: "live", namespace: old }),
        (error: Error) => {
          assert.ok(error instanceof TypeError);
          assert.match(error.message, /^namespace must be a lowercase letter/);
          assert.ok(
            error.message.includes(
              `legacyKeyLayouts: [{ ...LEGACY_KEY_LAYOUTS["nestarc-v0"], namespace: "${old}" }]`,
            ),
            error.message,
          );
          return true;
        },
      );
    }
    for (const other of ["", "a_b", "a".repeat(33), "ak-1", "é"]) {
      assert.throws(
        () => generateKey({ environment: "live", namespace: other }),
        (error: Error) => !error.message.includes("LEGACY_KEY_LAYOUTS"),
      );
    }
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

/** A hex layout with its own namespace, other environment words, "-" and a checksum. */
const ACME: LegacyKeyLayoutDescription = {
  name: "acme-v1",
  separator: "-",
  namespace: "Sk",
  environments: { live: "prod", test: "dev" },
  prefixLength: 8,
  secretLength: 40,
  alphabet: "hex",
  checksum: true,
};

function acmeKey(environment: "prod" | "dev" = "prod") {
  const hex = (n: number) =>
    Array.from(crypto.getRandomValues(new Uint8Array(n)), (b) => (b % 16).toString(16)).join("");
  const prefix = hex(8);
  const secret = hex(40);
  const body = `Sk-${environment}-${prefix}-${secret}`;
  return { raw: body + encodeBase62Fixed(crc32Ascii(body), 6), prefix, secret };
}

describe("legacy key layouts (one home: key_format.ts)", () => {
  it("describes nestarc-v0 declaratively", () => {
    assert.deepEqual(LEGACY_KEY_LAYOUTS["nestarc-v0"], {
      name: "nestarc-v0",
      separator: "_",
      environments: { live: "live", test: "test" },
      prefixLength: 12,
      secretLength: 32,
      alphabet: "base62",
      checksum: false,
    });
    assert.ok(Object.isFrozen(LEGACY_KEY_LAYOUTS["nestarc-v0"]));
  });

  it("parses a nestarc-v0 key into the same prefix and secret, with the service's namespace", () => {
    const layouts = compileKeyLayouts(["nestarc-v0"], "legacyKeyLayouts");
    for (const environment of ["live", "test"] as const) {
      const key = nestarcKey("acme", environment);
      const parsed = layouts.parse(key.raw, "acme");
      assert.equal(parsed?.prefix, key.prefix);
      assert.equal(parsed?.secret, key.secret);
      assert.equal(parsed?.environment, environment);
      assert.equal(parsed?.namespace, "acme");
      assert.equal(layouts.parse(key.raw, "other"), null, "another namespace");
      assert.equal(compileKeyLayouts(undefined, "x").parse(key.raw, "acme"), null, "not enabled");
    }
    const current = generateKey({ environment: "live", namespace: "acme" });
    assert.deepEqual(layouts.parse(current.raw, "acme"), current, "the current layout first");
    const { raw } = nestarcKey("acme");
    for (
      const near of [
        raw + "A",
        raw.slice(0, -1),
        raw.replace("_live_", "_prod_"),
        raw.replace("acme_", "acme-"),
        raw.slice(0, 30) + "!" + raw.slice(31),
        raw.slice(0, 22) + "_" + raw.slice(22),
      ]
    ) {
      assert.equal(layouts.parse(near, "acme"), null, near);
    }
  });

  it("parses a described layout: separator, own namespace, environment words, alphabet, checksum", () => {
    const layouts = compileKeyLayouts([ACME], "legacyKeyLayouts");
    const key = acmeKey("dev");
    const parsed = layouts.parse(key.raw, "ak");
    assert.equal(parsed?.prefix, key.prefix);
    assert.equal(parsed?.secret, key.secret);
    assert.equal(parsed?.environment, "test");
    const last = key.raw.at(-1) === "0" ? "1" : "0";
    assert.equal(layouts.parse(key.raw.slice(0, -1) + last, "ak"), null, "a wrong checksum");
    assert.equal(layouts.parse(key.raw.replace("-dev-", "-test-"), "ak"), null);
    assert.equal(layouts.maxLength, Math.max(MAX_API_KEY_LENGTH, key.raw.length + 1));
  });

  it("refuses an invalid layout, naming the entry and field", () => {
    const cases: [unknown, RegExp][] = [
      ["nestarc-v9", /\[0\] is an unknown layout \(known: nestarc-v0\)/],
      [{ ...ACME, separator: "/" }, /\[0\]\.separator/],
      [{ ...ACME, namespace: "a_b" }, /\[0\]\.namespace/],
      [{ ...ACME, environments: { live: "x", test: "x" } }, /\[0\]\.environments/],
      [{ ...ACME, prefixLength: 3 }, /\[0\]\.prefixLength must be an integer from 4 to 64/],
      [{ ...ACME, secretLength: 129 }, /\[0\]\.secretLength/],
      [{ ...ACME, alphabet: "base32" }, /\[0\]\.alphabet/],
      [{ ...ACME, checksum: "yes" }, /\[0\]\.checksum/],
      [{ ...ACME, name: "" }, /\[0\]\.name/],
    ];
    for (const [entry, message] of cases) {
      assert.throws(() => compileKeyLayouts([entry], "opts.legacyKeyLayouts"), message);
    }
    assert.throws(() => compileKeyLayouts("nestarc-v0", "opts.legacyKeyLayouts"), /an array/);
  });

  it("redaction covers the enabled layouts: redactApiKeys and apiKeyRedactRegex", () => {
    const legacy = nestarcKey("ak").raw;
    const acme = acmeKey().raw;
    const current = generateKey({ environment: "live" }).raw;
    const text = `a=${legacy} b=${acme} c=${current}`;
    assert.equal(API_KEY_REDACT_REGEX.test(legacy), false, "the constant: the current layout");
    assert.equal(redactApiKeys(text), `a=${legacy} b=${acme} c=[REDACTED_API_KEY]`);
    const options = { legacyKeyLayouts: ["nestarc-v0" as const, ACME] };
    assert.equal(
      redactApiKeys(text, options),
      "a=[REDACTED_API_KEY] b=[REDACTED_API_KEY] c=[REDACTED_API_KEY]",
    );
    const regex = apiKeyRedactRegex(options);
    assert.equal(regex.flags.includes("g"), false);
    for (const key of [legacy, acme, current]) assert.equal(regex.test(`x ${key} y`), true);
    assert.equal(apiKeyRedactRegex(), API_KEY_REDACT_REGEX);
    assert.ok(!redactApiKeys(`${current}`, options).includes(current.slice(-6)), "whole key");
  });
});
