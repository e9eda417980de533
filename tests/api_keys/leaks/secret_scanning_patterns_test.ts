import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { RE2 } from "re2-wasm";
import { parse as parseToml } from "smol-toml";
import { parse as parseYaml } from "yaml";
import { secretScanningPatterns } from "../../../api_keys/leaks/secret_scanning_patterns.ts";
import {
  API_KEY_NAMESPACE_PATTERN,
  API_KEY_REDACT_REGEX,
  apiKeyRedactRegex,
  crc32Ascii,
  generateKey,
} from "../../../api_keys/key_format.ts";
import { BASE62_ALPHABET, encodeBase62Fixed } from "../../../api_keys/_base62.ts";
import { keyOf, SEED } from "../../reliability/hostile_inputs.ts";

const base62Char = fc.constantFrom(...BASE62_ALPHABET.split(""));
const base62 = (length: number) =>
  fc.string({ unit: base62Char, minLength: length, maxLength: length });
/**
 * Namespaces of every shape (1 and 16 characters, digits). A fixed set: each
 * RE2 compile holds WebAssembly memory for good, so compiles are cached.
 */
const NAMESPACES = [
  "a",
  "ak",
  "z9",
  "acme",
  "acme2",
  "k0k0k0",
  "abcdefghijklmnop",
  "x123456789012345",
];
const namespaceArb = fc.constantFrom(...NAMESPACES);
const envArb = fc.constantFrom("live", "test");
/** Text around a key: anything before; after, nothing or a character that cannot continue it. */
const beforeArb = fc.string({ maxLength: 20 });
const afterArb = fc.oneof(
  fc.constant(""),
  fc.tuple(
    fc.constantFrom(" ", "\n", '"', "'", "_", "-", ".", ",", "%", "&", "\u00e9"),
    fc.string(),
  )
    .map(([first, rest]) => first + rest),
);

const compiled = new Map<string, RE2>();
function re2(source: string): RE2 {
  let re = compiled.get(source);
  if (re === undefined) compiled.set(source, re = new RE2(source, "u"));
  return re;
}

/** Both engines' capture group 1 of the first match, which must agree. */
function firstKey(source: string, text: string): string | undefined {
  const js = new RegExp(source).exec(text)?.[1];
  const re2Match = re2(source).exec(text)?.[1];
  assert.equal(re2Match, js, "RE2 and JavaScript disagree");
  return js;
}

describe("secretScanningPatterns", () => {
  it("derives the current layout from key_format's expression", () => {
    const any = API_KEY_NAMESPACE_PATTERN.source.slice(1, -1);
    assert.ok(API_KEY_REDACT_REGEX.source.startsWith(any));
    const { regex } = secretScanningPatterns({ namespace: "acme" });
    assert.equal(
      regex.source,
      `(acme${API_KEY_REDACT_REGEX.source.slice(any.length)})(?:[^0-9A-Za-z]|$)`,
    );
  });

  it("matches every generated key in any text, in JavaScript and RE2 alike", () => {
    fc.assert(
      fc.property(
        namespaceArb,
        envArb,
        base62(12),
        base62(32),
        beforeArb,
        afterArb,
        (namespace, env, prefix, secret, before, after) => {
          const key = keyOf(prefix, secret, env, namespace);
          const patterns = secretScanningPatterns({ namespace });
          // a key-looking "before" could hold an earlier match: only the key is placed here
          fc.pre(!new RegExp(patterns.regex.source).test(before));
          assert.equal(firstKey(patterns.regex.source, before + key + after), key);
          assert.equal(patterns.isValidChecksum(key), true);
        },
      ),
      { seed: SEED, numRuns: 2_000 },
    );
    const patterns = secretScanningPatterns({ namespace: "ak" });
    for (let i = 0; i < 1_000; i++) {
      const { raw } = generateKey({ environment: i % 2 ? "live" : "test" });
      assert.equal(patterns.regex.exec(`token=${raw};`)?.[1], raw);
      assert.equal(patterns.isValidChecksum(raw), true);
    }
  });

  it("finds every key of a text with a g flag, even keys one character apart", () => {
    const patterns = secretScanningPatterns({ namespace: "ak" });
    const keys = Array.from({ length: 5 }, () => generateKey({ environment: "live" }).raw);
    const text = `x${keys.join(" ")}\n%20${keys[0]}_old`;
    const found = [...text.matchAll(new RegExp(patterns.regex.source, "g"))].map((m) => m[1]);
    assert.deepEqual(found, [...keys, keys[0]]);
  });

  it("rejects structural near-misses: length, alphabet, separators, environment, namespace", () => {
    const mutations:
      ((parts: { ns: string; env: string; prefix: string; rest: string }) => string)[] = [
        ({ ns, env, prefix, rest }) => `${ns}_${env}_${prefix.slice(1)}_${rest}`,
        ({ ns, env, prefix, rest }) => `${ns}_${env}_${prefix}x_${rest}`,
        ({ ns, env, prefix, rest }) => `${ns}_${env}_${prefix}_${rest.slice(1)}`,
        ({ ns, env, prefix, rest }) => `${ns}_${env}_${prefix}_${rest}x`,
        ({ ns, env, prefix, rest }) =>
          `${ns}_${env}_${prefix}_${rest.slice(0, 20)}+${rest.slice(21)}`,
        ({ ns, env, prefix, rest }) =>
          `${ns}_${env}_${prefix.slice(0, 5)}/${prefix.slice(6)}_${rest}`,
        ({ ns, env, prefix, rest }) =>
          `${ns}_${env}_${prefix}_${rest.slice(0, 9)}_${rest.slice(10)}`,
        ({ ns, env, prefix, rest }) => `${ns}-${env}_${prefix}_${rest}`,
        ({ ns, env, prefix, rest }) => `${ns}_${env}-${prefix}_${rest}`,
        ({ ns, env, prefix, rest }) => `${ns}_${env}_${prefix}-${rest}`,
        ({ ns, env, prefix, rest }) => `${ns}_${env}_${prefix}${rest}`,
        ({ ns, prefix, rest }) => `${ns}_prod_${prefix}_${rest}`,
        ({ ns, env, prefix, rest }) => `${ns}_${env.toUpperCase()}_${prefix}_${rest}`,
        ({ ns, env, prefix, rest }) => `${ns}_${env.slice(1)}_${prefix}_${rest}`,
        ({ ns, env, prefix, rest }) => `${ns.toUpperCase()}_${env}_${prefix}_${rest}`,
        ({ ns, env, prefix, rest }) => `${ns}2_${env}_${prefix}_${rest}`,
      ];
    fc.assert(
      fc.property(
        namespaceArb.filter((ns) => ns.length < 16),
        envArb,
        base62(12),
        base62(32),
        fc.nat(mutations.length - 1),
        (ns, env, prefix, secret, which) => {
          const rest = keyOf(prefix, secret, env, ns).slice(-38);
          const nearMiss = mutations[which]({ ns, env, prefix, rest });
          const patterns = secretScanningPatterns({ namespace: ns });
          assert.equal(firstKey(patterns.regex.source, nearMiss), undefined, nearMiss);
          assert.equal(patterns.isValidChecksum(nearMiss), false);
        },
      ),
      { seed: SEED, numRuns: 3_000 },
    );
  });

  it("matches checksum-only near-misses, which isValidChecksum rejects", () => {
    fc.assert(
      fc.property(
        namespaceArb,
        envArb,
        base62(12),
        base62(32),
        fc.nat(),
        base62Char,
        (namespace, env, prefix, secret, at, char) => {
          const key = keyOf(prefix, secret, env, namespace);
          // one base62 character of the prefix, secret or checksum changed
          const start = key.length - 51;
          const index = start + (at % 50 >= 12 ? (at % 50) + 1 : at % 50);
          const other = char === key[index] ? (char === "0" ? "1" : "0") : char;
          const nearMiss = key.slice(0, index) + other + key.slice(index + 1);
          const patterns = secretScanningPatterns({ namespace });
          assert.equal(firstKey(patterns.regex.source, nearMiss), nearMiss);
          assert.equal(patterns.isValidChecksum(nearMiss), false);
        },
      ),
      { seed: SEED, numRuns: 3_000 },
    );
  });

  it("isValidChecksum takes only whole keys of its own namespace and never throws", () => {
    const patterns = secretScanningPatterns({ namespace: "acme" });
    const own = generateKey({ environment: "test", namespace: "acme" }).raw;
    const other = generateKey({ environment: "test", namespace: "acmf" }).raw;
    assert.equal(patterns.isValidChecksum(own), true);
    assert.equal(patterns.isValidChecksum(other), false);
    assert.equal(patterns.isValidChecksum(` ${own}`), false);
    assert.equal(patterns.isValidChecksum(own.repeat(1_000)), false);
    for (const value of [undefined, null, 42, {}, [own], Symbol("k")]) {
      assert.equal(patterns.isValidChecksum(value as unknown as string), false);
    }
  });

  it("also matches the nestarc-v0 layout (no checksum) only when enabled", () => {
    const legacyKey = `ak_live_${"A1".repeat(6)}_${"b2".repeat(16)}`;
    const plain = secretScanningPatterns({ namespace: "ak" });
    const both = secretScanningPatterns({ namespace: "ak", legacyKeyLayouts: ["nestarc-v0"] });
    assert.equal(firstKey(plain.regex.source, `k=${legacyKey}\n`), undefined);
    assert.equal(plain.isValidChecksum(legacyKey), false);
    assert.equal(firstKey(both.regex.source, `k=${legacyKey}\n`), legacyKey);
    assert.equal(both.isValidChecksum(legacyKey), true);
    assert.equal(both.isValidChecksum(legacyKey + "x"), false);
    assert.equal(both.isValidChecksum(legacyKey.replace("_live_", "_prod_")), false);
    const current = generateKey({ environment: "live" }).raw;
    assert.equal(firstKey(both.regex.source, `${current}.`), current);
    assert.equal(both.isValidChecksum(current), true);
    assert.match(both.gitleaksToml, /nestarc-v0/);
  });

  it("takes described layouts from key_format (own namespace, words, checksum, keywords)", () => {
    const layout = {
      name: "acme-v1",
      separator: "-",
      namespace: "Sk",
      environments: { live: "prod", test: "dev" },
      prefixLength: 8,
      secretLength: 40,
      alphabet: "hex",
      checksum: true,
    } as const;
    const body = `Sk-dev-${"0a".repeat(4)}-${"f9".repeat(20)}`;
    const key = body + encodeBase62Fixed(crc32Ascii(body), 6);
    const patterns = secretScanningPatterns({ namespace: "acme", legacyKeyLayouts: [layout] });
    assert.equal(firstKey(patterns.regex.source, `export K=${key}\n`), key);
    assert.equal(patterns.isValidChecksum(key), true);
    assert.equal(
      patterns.isValidChecksum(key.slice(0, -1) + (key.endsWith("0") ? "1" : "0")),
      false,
    );
    const legacySource = apiKeyRedactRegex({ legacyKeyLayouts: [layout] }).source.split("|").at(
      -1,
    )!;
    assert.ok(patterns.regex.source.includes(legacySource), "the same expression as redaction");
    const toml = parseToml(patterns.gitleaksToml) as { rules: { keywords: string[] }[] };
    assert.deepEqual(toml.rules[0].keywords, ["acme_live_", "acme_test_", "Sk-prod-", "Sk-dev-"]);
    assert.throws(
      () =>
        secretScanningPatterns({
          namespace: "acme",
          legacyKeyLayouts: [{ ...layout, prefixLength: 0 }],
        }),
      /SecretScanningPatternsOptions\.legacyKeyLayouts\[0\]\.prefixLength/,
    );
  });

  it("rejects an invalid namespace or an unknown legacy layout", () => {
    assert.throws(() => secretScanningPatterns({ namespace: "Ak" }), TypeError);
    assert.throws(() => secretScanningPatterns({ namespace: "a".repeat(17) }), TypeError);
    assert.throws(() => secretScanningPatterns(undefined as never), TypeError);
    assert.throws(
      () => secretScanningPatterns({ namespace: "ak", legacyKeyLayouts: ["v9" as never] }),
      /unknown layout/,
    );
    assert.throws(
      () => secretScanningPatterns({ namespace: "ak", legacyKeyLayouts: "nestarc-v0" as never }),
      TypeError,
    );
  });

  for (const legacyKeyLayouts of [[], ["nestarc-v0" as const]]) {
    it(`writes rule files that parse and carry the regex (legacy: ${legacyKeyLayouts})`, () => {
      const patterns = secretScanningPatterns({ namespace: "acme", legacyKeyLayouts });
      const toml = parseToml(patterns.gitleaksToml) as {
        extend: { useDefault: boolean };
        rules: { id: string; regex: string; secretGroup: number; keywords: string[] }[];
      };
      assert.equal(toml.extend.useDefault, true);
      assert.equal(toml.rules.length, 1);
      assert.equal(toml.rules[0].regex, patterns.regex.source);
      assert.equal(toml.rules[0].secretGroup, 1);
      assert.deepEqual(toml.rules[0].keywords, ["acme_live_", "acme_test_"]);
      const yaml = parseYaml(patterns.trufflehogYaml) as {
        detectors: { name: string; keywords: string[]; regex: Record<string, string> }[];
      };
      assert.equal(yaml.detectors.length, 1);
      assert.deepEqual(yaml.detectors[0].regex, { key: patterns.regex.source });
      assert.deepEqual(yaml.detectors[0].keywords, ["acme_live_", "acme_test_"]);
      assert.equal(yaml.detectors[0].name, toml.rules[0].id);
      for (const text of [patterns.gitleaksToml, patterns.trufflehogYaml]) {
        assert.match(text, /^# .*CRC-32/m, "the checksum is described in a comment");
        assert.match(text, /isValidChecksum/);
      }
      // RE2 (Go's regexp semantics) compiles what both tools get
      for (const source of [toml.rules[0].regex, yaml.detectors[0].regex.key]) {
        assert.doesNotThrow(() => re2(source));
      }
    });
  }
});
