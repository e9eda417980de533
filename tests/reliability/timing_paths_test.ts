/**
 * Structural timing test: every verify failure path of a key-shaped input
 * costs exactly one HMAC verification and the same storage calls, so no path
 * is cheaper to probe than another. Measured times are printed, never asserted.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  ApiKeyError,
  ApiKeysService,
  InMemoryApiKeyStorage,
  parseKey,
} from "../../api_keys/mod.ts";
import { keyOf } from "./hostile_inputs.ts";
import { PEPPER_1, PEPPER_2, spyHasher, spyStorage } from "./harness.ts";

const SCOPES = [{ resource: "orders", level: "read" as const }];

/** Same prefix, different secret, valid checksum. */
function withWrongSecret(key: string): string {
  const { prefix, secret, environment } = parseKey(key)!;
  return keyOf(prefix, (secret[0] === "Q" ? "R" : "Q") + secret.slice(1), environment);
}

describe("verify failure paths are structurally alike", () => {
  const inner = new InMemoryApiKeyStorage();
  const { storage, calls } = spyStorage(inner);
  const paths: Record<string, string> = {};
  let service: ApiKeysService;
  const warn = console.warn;
  after(() => {
    console.warn = warn;
  });

  before(async () => {
    // Keys hashed with pepper 2, which the verifying service no longer has (retired).
    const old = new ApiKeysService({ peppers: { 1: PEPPER_1, 2: PEPPER_2 }, storage: inner });
    const retired = await old.create({ tenantId: "t", name: "retired", scopes: SCOPES });
    service = new ApiKeysService({ peppers: { 1: PEPPER_1 }, storage, cache: { ttlMs: 60_000 } });
    const active = await service.create({ tenantId: "t", name: "active", scopes: SCOPES });
    const revoked = await service.create({ tenantId: "t", name: "revoked", scopes: SCOPES });
    await service.revoke(revoked.id);
    await service.verify(active.key); // cached: a wrong secret must still cost the full path
    console.warn = () => {}; // the retired-pepper warning
    paths["unknown prefix"] = keyOf("UnknownPref1", "S".repeat(32));
    paths["wrong secret"] = withWrongSecret(active.key);
    paths["revoked, wrong secret"] = withWrongSecret(revoked.key);
    paths["retired pepper"] = retired.key;
    paths["retired pepper, wrong secret"] = withWrongSecret(retired.key);
  });

  it("each path: one findByPrefix, one HMAC verification, no sign, api_key_invalid", async () => {
    const hasher = spyHasher();
    try {
      for (const [name, key] of Object.entries(paths)) {
        for (let round = 0; round < 3; round++) {
          calls.length = 0;
          hasher.calls.length = 0;
          const error = await service.verify(key).then(() => null, (e) => e);
          assert.ok(error instanceof ApiKeyError, name);
          assert.equal(error.code, "api_key_invalid", name);
          assert.deepEqual(calls.map((c) => c.method), ["findByPrefix"], name);
          assert.deepEqual(hasher.calls.map((c) => c.operation), ["verify"], name);
          assert.equal(hasher.calls[0].dataBytes, 32, name);
        }
      }
    } finally {
      hasher.restore();
    }
  });

  it("prints the measured time of each path (not asserted)", async () => {
    const rounds = 2_000;
    const lines: string[] = [];
    for (const [name, key] of Object.entries(paths)) {
      const samples: number[] = [];
      for (let i = 0; i < rounds; i++) {
        const start = performance.now();
        await service.verify(key).catch(() => {});
        samples.push(performance.now() - start);
      }
      samples.sort((a, b) => a - b);
      const at = (q: number) => (samples[Math.floor(q * (samples.length - 1))] * 1000).toFixed(1);
      lines.push(
        `# verify failure path ${name.padEnd(30)} median ${at(0.5)} µs  p90 ${at(0.9)} µs`,
      );
    }
    console.log(lines.join("\n"));
    assert.equal(lines.length, Object.keys(paths).length);
  });
});
