/**
 * No noisy neighbour: 4 connections hammering an exhausted key at full speed
 * never push an unrelated key's checks past `timeoutMs` (a refused check
 * costs what an allowed one does: constant work per check).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createRateLimiter } from "../../rate_limits/limiter.ts";
import { freshSubject, openStore, readyStores } from "./_services.ts";

const TIMEOUT_MS = 1_000;
const FLOOD_MS = 3_000;

for (const kind of await readyStores("noisy neighbour")) {
  describe(`${kind} store: no noisy neighbour`, () => {
    it("4 connections flooding an exhausted key: an unrelated key's checks all answer within timeoutMs", async () => {
      const flooders = await Promise.all([0, 1, 2, 3].map(() => openStore(kind, undefined, 1)));
      const victim = await openStore(kind, undefined, 1);
      try {
        const hot = freshSubject("hot");
        const policies = [{ name: "api", limit: 1_000, windowMs: 600_000 }];
        const limiters = flooders.map(({ store }) =>
          createRateLimiter({
            store,
            timeoutMs: TIMEOUT_MS,
            onStoreError: "closed",
            logger: () => {},
          })
        );
        // Exhaust the hot key first (1,000 units in one window).
        await Promise.all(
          Array.from({ length: 1_000 }, (_, i) => limiters[i % 4].check(hot, policies)),
        );
        const exhausted = await limiters[0].check(hot, policies);
        assert.equal(exhausted.allowed, false);
        assert.equal(exhausted.unavailable, false);

        const until = performance.now() + FLOOD_MS;
        let refused = 0;
        const flood = limiters.map(async (limiter) => {
          while (performance.now() < until) {
            // 50 in flight per connection: full speed through the door's batches.
            const answers = await Promise.all(
              Array.from({ length: 50 }, () => limiter.check(hot, policies)),
            );
            refused += answers.filter((a) => !a.allowed).length;
          }
        });
        const victimLimiter = createRateLimiter({
          store: victim.store,
          timeoutMs: TIMEOUT_MS,
          onStoreError: "closed",
          logger: () => {},
        });
        const latencies: number[] = [];
        let unavailable = 0;
        while (performance.now() < until) {
          const started = performance.now();
          const answer = await victimLimiter.check(freshSubject("victim"), policies);
          latencies.push(performance.now() - started);
          if (answer.unavailable) unavailable++;
          else assert.equal(answer.allowed, true);
        }
        await Promise.all(flood);
        latencies.sort((a, b) => a - b);
        const p50 = latencies[Math.floor(latencies.length / 2)];
        const max = latencies[latencies.length - 1];
        console.log(
          `${kind} neighbour: ${refused} flood checks refused in ${FLOOD_MS} ms; victim ` +
            `${latencies.length} checks, p50 ${p50.toFixed(2)} ms, max ${max.toFixed(1)} ms`,
        );
        assert.ok(refused > 1_000, `the flood ran (${refused} refused)`);
        assert.equal(unavailable, 0, "no victim check answered by the failure policy");
        assert.ok(max < TIMEOUT_MS, `the victim's slowest check took ${max} ms`);
      } finally {
        for (const { close } of [...flooders, victim]) await close();
      }
    });
  });
}
