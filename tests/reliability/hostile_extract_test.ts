import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { ApiKeyError, extractApiKey, MAX_API_KEY_LENGTH } from "../../api_keys/mod.ts";
import {
  collectUnhandledRejections,
  HUNG,
  serviceOver,
  settle,
  spyHasher,
  spyStorage,
} from "./harness.ts";
import { hostileString, RUNS, SEED, wellFormedKey } from "./hostile_inputs.ts";

type HeaderValue = string | string[] | undefined;

describe("extractApiKey under hostile headers", () => {
  const { storage, calls } = spyStorage();
  const service = serviceOver(storage, { cache: false });
  let realKey = "";
  before(async () => {
    realKey = (await service.create({
      tenantId: "t",
      name: "n",
      scopes: [{ resource: "r", level: "read" }],
    })).key;
  });

  /** One header value: hostile text, Bearer forms, keys, or several values at once. */
  const headerValue = (): fc.Arbitrary<HeaderValue> => {
    const single = fc.oneof(
      { arbitrary: hostileString, weight: 4 },
      { arbitrary: wellFormedKey, weight: 1 },
      { arbitrary: fc.constant(realKey), weight: 1 },
      {
        arbitrary: fc.tuple(
          fc.constantFrom("Bearer ", "bearer\t", "BEARER  ", "Bearer", "Basic ", "Bearer \r\n"),
          fc.oneof(hostileString, wellFormedKey, fc.constant(realKey)),
        ).map(([scheme, token]) => scheme + token),
        weight: 3,
      },
      {
        arbitrary: fc.array(fc.oneof(wellFormedKey, fc.constant(realKey), hostileString), {
          minLength: 2,
          maxLength: 4,
        }).map((values) => values.join(", ")),
        weight: 1,
      },
    );
    return fc.oneof(
      { arbitrary: fc.constant(undefined), weight: 2 },
      { arbitrary: single, weight: 6 },
      { arbitrary: fc.array(single, { minLength: 0, maxLength: 4 }), weight: 2 },
    );
  };

  it(`returns undefined or one bounded key, or throws api_key_malformed (${RUNS} requests)`, async () => {
    const rejections = collectUnhandledRejections();
    const hasher = spyHasher();
    try {
      await fc.assert(
        fc.asyncProperty(headerValue(), headerValue(), async (xApiKey, authorization) => {
          const headers: Record<string, HeaderValue> = {
            "x-api-key": xApiKey,
            authorization,
          };
          let extracted: string | undefined;
          try {
            extracted = extractApiKey((name) => headers[name]);
          } catch (error) {
            assert.ok(error instanceof ApiKeyError, `not an ApiKeyError: ${String(error)}`);
            assert.equal(error.code, "api_key_malformed");
            return;
          }
          if (extracted !== undefined) {
            assert.equal(typeof extracted, "string");
            assert.ok(extracted.length > 0 && extracted.length <= MAX_API_KEY_LENGTH);
            assert.equal(extracted, extracted.trim());
          }
          // The request-level path of the guard: extraction, then authorize.
          const storageFrom = calls.length;
          const hashFrom = hasher.calls.length;
          const outcome = await settle(service.authorize(extracted));
          assert.notEqual(outcome, HUNG);
          if (outcome !== HUNG && "error" in outcome) {
            assert.ok(outcome.error instanceof ApiKeyError);
          } else {
            assert.equal(extracted, realKey, "only the real key may authorize");
          }
          for (const call of calls.slice(storageFrom)) {
            if (/^(findByPrefix|peekByPrefix)$/.test(call.method)) {
              assert.equal((call.args[0] as string).length, 12);
            }
          }
          for (const call of hasher.calls.slice(hashFrom)) assert.equal(call.dataBytes, 32);
        }),
        { seed: SEED + 3, numRuns: RUNS },
      );
    } finally {
      hasher.restore();
    }
    await rejections.stop();
    assert.deepEqual(rejections.reasons, []);
  });

  it("refuses two different keys and an over-long X-API-Key without echoing them", () => {
    fc.assert(
      fc.property(wellFormedKey, wellFormedKey, (a, b) => {
        fc.pre(a !== b);
        for (
          const headers of [
            { "x-api-key": a, authorization: `Bearer ${b}` },
            { "x-api-key": [a, b] },
            { "x-api-key": `${a}, ${b}` },
            { authorization: [`Bearer ${a}`, `Bearer ${b}`] },
            { "x-api-key": a + "x".repeat(MAX_API_KEY_LENGTH) },
          ] as Record<string, HeaderValue>[]
        ) {
          const error = (() => {
            try {
              extractApiKey((name) => headers[name]);
            } catch (e) {
              return e;
            }
          })();
          assert.ok(error instanceof ApiKeyError && error.code === "api_key_malformed");
          const text = `${error.message} ${error.reason} ${JSON.stringify(error)} ${error}`;
          assert.ok(!text.includes(a) && !text.includes(b), "a key leaked into the error");
        }
      }),
      { seed: SEED + 4, numRuns: 1_000 },
    );
  });
});
