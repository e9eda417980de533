import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { hasApiKeyLayout, MAX_API_KEY_LENGTH, parseKey } from "../../api_keys/mod.ts";
import {
  checksumOf,
  hostileString,
  hostileValue,
  RUNS,
  SEED,
  wellFormedKey,
} from "./hostile_inputs.ts";

/** Independent oracle: the documented layout plus a CRC-32 checksum. */
const LAYOUT =
  /^([a-z][a-z0-9]{0,15})_(live|test)_([0-9A-Za-z]{12})_([0-9A-Za-z]{32})([0-9A-Za-z]{6})$/;
function oracleAccepts(value: string): boolean {
  const parts = LAYOUT.exec(value);
  return parts !== null && checksumOf(value.slice(0, -6)) === parts[5];
}

describe("parseKey under hostile input", () => {
  it(`never throws and accepts exactly the well-formed keys (${RUNS} strings)`, () => {
    let accepted = 0;
    fc.assert(
      fc.property(hostileString, (input) => {
        const parsed = parseKey(input);
        assert.equal(parsed !== null, oracleAccepts(input));
        if (parsed !== null) {
          accepted++;
          assert.equal(parsed.raw, input);
          assert.ok(input.length <= MAX_API_KEY_LENGTH);
        }
        if (input.length > MAX_API_KEY_LENGTH) assert.equal(hasApiKeyLayout(input), false);
      }),
      { seed: SEED, numRuns: RUNS },
    );
    // Only strings that happen to be well-formed (e.g. a changed namespace) may parse.
    assert.ok(accepted < RUNS / 10, `${accepted} hostile inputs parsed`);
  });

  it("returns null for non-string values instead of throwing", () => {
    fc.assert(
      fc.property(hostileValue, (input) => {
        if (typeof input === "string") return;
        assert.equal(parseKey(input as string), null);
        assert.equal(hasApiKeyLayout(input as string), false);
      }),
      { seed: SEED, numRuns: 2_000 },
    );
  });

  it("parses every well-formed key into parts that rebuild it", () => {
    fc.assert(
      fc.property(wellFormedKey, (key) => {
        const parsed = parseKey(key);
        assert.ok(parsed !== null);
        const { namespace, environment, prefix, secret, checksum } = parsed;
        assert.equal(`${namespace}_${environment}_${prefix}_${secret}${checksum}`, key);
      }),
      { seed: SEED, numRuns: 2_000 },
    );
  });
});
