/**
 * Refusals remembered (docs/rate-limits.md), on each real store: a subject
 * refused on a policy stops reaching the store until that policy can have
 * room, then is counted there again (never refused past that moment); through
 * `ApiKeysService.authorize` too, where a key past its limit answers 429 with
 * its store untouched.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ApiKeyError, ApiKeysService } from "../../api_keys/mod.ts";
import { compileRateLimitPolicies } from "../../rate_limits/policy.ts";
import { creditedKey, CreditedStorage } from "../api_keys/credited_storage.ts";
import { PEPPER_1 } from "../api_keys/helpers.ts";
import { freshSubject, openLimiter, readyStores } from "./_services.ts";

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const SECOND = { name: "second", limit: 2, windowMs: 1_000 };

for (const kind of await readyStores("refusals remembered")) {
  describe(`${kind} store: refusals remembered`, () => {
    it("an exhausted subject's checks are answered without the store until its window can have room, then counted there again", async () => {
      const real = await openLimiter(kind);
      try {
        const limiter = real.limiter;
        const policies = compileRateLimitPolicies([SECOND]);
        const subject = freshSubject("refused");
        for (let i = 0; i < 2; i++) {
          assert.equal((await limiter.check(subject, policies)).allowed, true);
        }
        const refused = await limiter.check(subject, policies);
        assert.deepEqual([refused.allowed, refused.outcome], [false, "store"]);
        const sent = real.sent();
        const flood = await Promise.all(
          Array.from({ length: 500 }, () => limiter.check(subject, policies)),
        );
        assert.equal(flood.filter((r) => r.allowed || r.outcome !== "store").length, 0);
        assert.equal(real.sent(), sent, "no check of the flood reached the store");
        // Room again at the moment the store said: checked there, and counted.
        await sleep(refused.policies[0].resetMs + 20);
        const again = await limiter.check(subject, policies);
        assert.equal(again.allowed, true);
        assert.equal(real.sent(), sent + 1);
      } finally {
        await real.close();
      }
    });

    it("through authorize: a key past its limit is refused (429) without a round trip until its window moves", async () => {
      const real = await openLimiter(kind);
      try {
        const storage = new CreditedStorage();
        const limiter = real.limiter;
        const service = new ApiKeysService({ peppers: { 1: PEPPER_1 }, storage, limiter });
        const { key } = await creditedKey(service, storage, { remaining: 100 }, [SECOND]);
        for (let i = 0; i < 2; i++) await service.authorize(key);
        const first = await service.authorize(key).then(() => undefined, (e) => e);
        assert.ok(first instanceof ApiKeyError && first.httpStatus === 429, String(first));
        const sent = real.sent();
        for (let i = 0; i < 50; i++) {
          const error = await service.authorize(key).then(() => undefined, (e) => e);
          assert.ok(error instanceof ApiKeyError && error.httpStatus === 429);
        }
        assert.equal(real.sent(), sent, "the refused requests sent nothing");
        await sleep(first.rateLimitResults![0].resetMs + 20);
        const context = await service.authorize(key);
        assert.equal(context.creditResult?.remaining, 97, "spent again, once");
        assert.equal(real.sent(), sent + 1);
      } finally {
        await real.close();
      }
    });
  });
}
