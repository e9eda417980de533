import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  ApiKeyError,
  type ApiKeyErrorCode,
  type ApiKeysService,
  MAX_API_KEY_LENGTH,
  parseKey,
} from "../../api_keys/mod.ts";
import {
  collectUnhandledRejections,
  type HashCall,
  HUNG,
  serviceOver,
  settle,
  spyHasher,
  spyStorage,
  type StorageCall,
} from "./harness.ts";
import {
  beyondKeyLength,
  checksumOf,
  hostileString,
  hostileValue,
  oneCharChanged,
  RUNS,
  SEED,
} from "./hostile_inputs.ts";

const SCOPES = [{ resource: "orders", level: "read" as const }];

/** Real stored keys: active, revoked, allowlisted, test environment. */
async function seed(service: ApiKeysService): Promise<string[]> {
  const active = await service.create({ tenantId: "t1", name: "a", scopes: SCOPES });
  const revoked = await service.create({ tenantId: "t1", name: "r", scopes: SCOPES });
  await service.revoke(revoked.id);
  const allowlisted = await service.create({
    tenantId: "t2",
    name: "ip",
    scopes: SCOPES,
    allowedIpCidrs: ["10.0.0.0/8", "2001:db8::/32"],
  });
  const test = await service.create({
    tenantId: "t3",
    name: "t",
    scopes: SCOPES,
    environment: "test",
  });
  return [active.key, revoked.key, allowlisted.key, test.key];
}

/** A stored key's prefix with a different secret and a valid checksum (wrong secret). */
function wrongSecret(key: string, salt: number): string {
  const parsed = parseKey(key)!;
  const secret = (salt % 2 === 0 ? "Z" : "Y") + parsed.secret.slice(1);
  const body = `${parsed.namespace}_${parsed.environment}_${parsed.prefix}_${
    secret === parsed.secret ? "X" + secret.slice(1) : secret
  }`;
  return body + checksumOf(body);
}

const VERIFY_CODES: ApiKeyErrorCode[] = ["api_key_malformed", "api_key_invalid", "api_key_revoked"];

describe("verify and authorize under hostile input", () => {
  const { storage, calls } = spyStorage();
  const service = serviceOver(storage, { cache: false, debounceMs: 0 });
  let keys: string[] = [];
  let hashCalls: HashCall[] = [];
  let restoreHasher = () => {};
  before(async () => {
    keys = await seed(service);
    const spy = spyHasher();
    hashCalls = spy.calls;
    restoreHasher = spy.restore;
  });
  after(() => restoreHasher());

  /** Inputs: hostile strings and values, plus near-misses of the real keys. */
  const input = () =>
    fc.oneof(
      { arbitrary: hostileString, weight: 6 },
      { arbitrary: hostileValue, weight: 1 },
      { arbitrary: oneCharChanged(fc.constantFrom(...keys)), weight: 2 },
      {
        arbitrary: fc.tuple(fc.constantFrom(...keys), fc.nat()).map(([k, n]) => wrongSecret(k, n)),
        weight: 1,
      },
    );

  /** Checks what reached the hasher and storage for one input. */
  function checkReach(value: unknown, storageFrom: number, hashFrom: number): void {
    const reachedStorage = calls.slice(storageFrom).filter((c) => c.method !== "touchLastUsed");
    const reachedHasher = hashCalls.slice(hashFrom);
    if (beyondKeyLength(value)) {
      assert.deepEqual(reachedStorage, [], "an over-long input reached storage");
      assert.deepEqual(reachedHasher, [], "an over-long input reached the hasher");
      return;
    }
    for (const call of reachedStorage as StorageCall[]) {
      // A lookup by prefix, awaited or through the in-memory storage's peekByPrefix.
      assert.match(call.method, /^(findByPrefix|peekByPrefix)$/);
      assert.equal((call.args[0] as string).length, 12);
    }
    for (const call of reachedHasher) assert.equal(call.dataBytes, 32);
    assert.ok(reachedHasher.length <= 1, "more than one hash per verification");
  }

  it(`verify rejects every input with a typed ApiKeyError (${RUNS} inputs)`, async () => {
    const rejections = collectUnhandledRejections();
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(input(), async (value) => {
        const storageFrom = calls.length;
        const hashFrom = hashCalls.length;
        const outcome = await settle(service.verify(value as string));
        assert.notEqual(outcome, HUNG, "verify hung");
        assert.ok(outcome !== HUNG && "error" in outcome, "a hostile input verified");
        const error = outcome.error;
        assert.ok(error instanceof ApiKeyError, `not an ApiKeyError: ${String(error)}`);
        assert.ok(VERIFY_CODES.includes(error.code), error.code);
        assert.ok(error.httpStatus === 401);
        seen.add(error.code);
        checkReach(value, storageFrom, hashFrom);
      }),
      { seed: SEED, numRuns: RUNS },
    );
    await rejections.stop();
    assert.deepEqual(rejections.reasons, []);
    assert.deepEqual([...seen].sort(), ["api_key_invalid", "api_key_malformed"]);
  });

  it(`authorize rejects every input with a typed ApiKeyError (${RUNS} inputs)`, async () => {
    const rejections = collectUnhandledRejections();
    const options = fc.record(
      {
        clientIp: fc.oneof(fc.ipV4(), fc.ipV6(), fc.string({ unit: "binary", maxLength: 60 })),
        requiredEnvironment: fc.constantFrom("live" as const, "test" as const),
        requiredScope: fc.record({
          resource: fc.string({ maxLength: 20 }),
          level: fc.constantFrom("read" as const, "write" as const),
        }),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(input(), options, async (value, opts) => {
        const storageFrom = calls.length;
        const hashFrom = hashCalls.length;
        const outcome = await settle(service.authorize(value as string, opts));
        assert.notEqual(outcome, HUNG, "authorize hung");
        assert.ok(outcome !== HUNG && "error" in outcome, "a hostile input was authorized");
        const error = outcome.error;
        assert.ok(error instanceof ApiKeyError, `not an ApiKeyError: ${String(error)}`);
        const missing = value === undefined || value === null || value === "";
        assert.equal(error.code === "api_key_missing", missing);
        checkReach(value, storageFrom, hashFrom);
      }),
      { seed: SEED + 1, numRuns: RUNS },
    );
    await rejections.stop();
    assert.deepEqual(rejections.reasons, []);
  });

  it("authorize of real keys under hostile options ends in a context or a typed error", async () => {
    const [active, , allowlisted, test] = keys;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(active, allowlisted, test),
        fc.oneof(fc.ipV4(), fc.ipV6(), fc.string({ unit: "binary", maxLength: 60 })),
        fc.constantFrom(undefined, "live" as const, "test" as const),
        async (key, clientIp, requiredEnvironment) => {
          const outcome = await settle(
            service.authorize(key, {
              clientIp,
              requiredEnvironment,
              requiredScope: SCOPES[0],
            }),
          );
          assert.notEqual(outcome, HUNG);
          if (outcome !== HUNG && "error" in outcome) {
            assert.ok(outcome.error instanceof ApiKeyError);
            assert.ok(
              ["api_key_ip_not_allowed", "api_key_environment_mismatch"].includes(
                outcome.error.code,
              ),
            );
          }
        },
      ),
      { seed: SEED + 2, numRuns: 2_000 },
    );
  });

  it("an over-long input never costs a storage call or a hash, even with a valid key inside", async () => {
    const storageFrom = calls.length;
    const hashFrom = hashCalls.length;
    for (const key of keys) {
      const pad = "A".repeat(MAX_API_KEY_LENGTH + 1 - key.length);
      for (
        const padded of [
          key + pad,
          pad + key,
          key + "\0".repeat(pad.length),
          key + " ".repeat(1 << 20),
        ]
      ) {
        assert.ok(padded.length > MAX_API_KEY_LENGTH);
        const error = await service.verify(padded).then(() => null, (e) => e);
        assert.ok(error instanceof ApiKeyError && error.code === "api_key_malformed");
      }
    }
    assert.equal(calls.length, storageFrom);
    assert.equal(hashCalls.length, hashFrom);
  });
});
