import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { API_KEY_REDACT_REGEX, generateKey, redactApiKeys } from "../../api_keys/mod.ts";
import { RUNS, SEED } from "./hostile_inputs.ts";

/** Places a key can sit in a log line, a URL, JSON or a header dump. */
const CONTEXTS: ((key: string) => string)[] = [
  (k) => k,
  (k) => `Authorization: Bearer ${k}`,
  (k) => `x-api-key: ${k}\r\n`,
  (k) => `GET /v1/orders?api_key=${k}&page=2`,
  (k) => `GET /v1/orders?auth=Bearer%20${k}`,
  (k) => `q=%22${k}%22`,
  (k) => JSON.stringify({ headers: { authorization: `Bearer ${k}` } }),
  (k) => JSON.stringify(`first line\n${k}\tafter`),
  (k) => `token_${k}`,
  (k) => `${k}_old`,
  (k) => `<${k}>`,
  (k) => `'${k}',"${k}"`,
  (k) => `${k}${k}`,
];

const namespace = fc.stringMatching(/^[a-z][a-z0-9]{0,15}$/);

describe("API_KEY_REDACT_REGEX and redactApiKeys", () => {
  it(`redact every generated key in every context (${RUNS} keys)`, () => {
    fc.assert(
      fc.property(
        namespace,
        fc.constantFrom("live" as const, "test" as const),
        fc.nat({ max: CONTEXTS.length - 1 }),
        fc.string({ maxLength: 30 }),
        fc.string({ maxLength: 30 }),
        (ns, environment, context, before, after) => {
          const { raw, secret } = generateKey({ environment, namespace: ns });
          const text = before + " " + CONTEXTS[context](raw) + " " + after;
          assert.ok(API_KEY_REDACT_REGEX.test(text));
          const redacted = redactApiKeys(text);
          assert.ok(!redacted.includes(raw), redacted);
          assert.ok(!redacted.includes(secret), redacted);
          assert.ok(redacted.includes("[REDACTED_API_KEY]"));
          assert.equal(API_KEY_REDACT_REGEX.test(redacted), false);
        },
      ),
      { seed: SEED + 20, numRuns: RUNS },
    );
  });

  /** Strings that look like keys but are not: one structural part wrong. */
  const nearMiss = fc.tuple(
    fc.stringMatching(/^[A-Za-z0-9]{12}$/),
    fc.stringMatching(/^[A-Za-z0-9]{38}$/),
    fc.nat({ max: 5 }),
  ).map(([prefix, tail, defect]) => {
    switch (defect) {
      case 0:
        return `ak_prod_${prefix}_${tail}`;
      case 1:
        return `ak_live_${prefix.slice(1)}_${tail}`;
      case 2:
        return `ak_live_${prefix}_${tail.slice(1)}`;
      case 3:
        return `ak_live${prefix}_${tail}`;
      case 4:
        return `AK_LIVE_${prefix}_${tail}`;
      default:
        return `ak_live_${prefix}-${tail}`;
    }
  });

  it(`match nothing in ${RUNS} strings that are not key-shaped`, () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: "binary", maxLength: 200 }),
          fc.string({
            unit: fc.constantFrom("a", "k", "_", "l", "i", "v", "e", "t", "s", "0", "Z"),
            maxLength: 120,
          }),
          nearMiss,
          fc.uuid(),
          fc.base64String({ maxLength: 120 }),
        ),
        (text) => {
          assert.equal(API_KEY_REDACT_REGEX.test(text), false, text);
          assert.equal(redactApiKeys(text), text);
        },
      ),
      { seed: SEED + 21, numRuns: RUNS },
    );
  });
});
