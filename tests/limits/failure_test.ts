/**
 * The failure policy on real stores cut mid-run (a loopback proxy in front of
 * the server, stopped): "open" passes every check and reports the metric,
 * "closed" reports unavailable; no check waits longer than timeoutMs + 1,000 ms.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { TcpProxy } from "../postgres/tcp_proxy.ts";
import { createRateLimiter, type RateLimiterMetric } from "../../rate_limits/limiter.ts";
import {
  checkOnce,
  DATABASE_URL,
  freshSubject,
  openStore,
  readyStores,
  REDIS_URL,
} from "./_services.ts";

// Generous enough for a healthy store on a loaded machine (the "before" checks must pass).
const TIMEOUT_MS = 500;
const BOUND_MS = TIMEOUT_MS + 1_000;

for (const kind of await readyStores("rate-limit failure policy")) {
  describe(`${kind} store stopped mid-run`, () => {
    for (const onStoreError of ["open", "closed"] as const) {
      it(`${onStoreError}: ${onStoreError === "open" ? "passes and reports the metric" : "reports unavailable"}, within timeoutMs + 1,000 ms`, async () => {
        const target = new URL(kind === "postgres" ? DATABASE_URL! : REDIS_URL!);
        const proxy = new TcpProxy(target.hostname, Number(target.port));
        const port = proxy.start();
        target.port = String(port);
        const { store, close } = await openStore(kind, target.href);
        const metrics: RateLimiterMetric[] = [];
        const limiter = createRateLimiter({
          store,
          onStoreError,
          timeoutMs: TIMEOUT_MS,
          metricIntervalMs: 60_000, // longer than the run: one report
          onMetric: (m) => void (m.type === "rate_limit.store_unavailable" && metrics.push(m)),
          logger: () => {},
        });
        const policy = [{ name: "api", limit: 1_000, windowMs: 60_000 }];
        const subject = freshSubject("failure");
        let worst = 0;
        const run = async (n: number) => {
          const results = [];
          for (let i = 0; i < n; i++) {
            const start = performance.now();
            results.push(await limiter.check(subject, policy));
            worst = Math.max(worst, performance.now() - start);
          }
          return results;
        };
        try {
          await checkOnce(store, [{ kind: "window", subject, ...policy[0], cost: 0 }]); // connects
          const before = await run(20);
          assert.ok(before.every((r) => r.allowed && !r.unavailable));
          proxy.stop();
          const after = await run(40);
          assert.ok(after.every((r) => r.unavailable), "every check after the stop is unavailable");
          assert.ok(after.every((r) => r.allowed === (onStoreError === "open")));
          assert.equal(metrics.length, 1);
          assert.equal(metrics[0].type, "rate_limit.store_unavailable");
          assert.equal(metrics[0].onStoreError, onStoreError);
          console.log(
            `${kind} ${onStoreError}: worst wait ${worst.toFixed(1)} ms (bound ${BOUND_MS} ms)`,
          );
          assert.ok(worst < BOUND_MS, `${worst} ms`);
        } finally {
          proxy.stop();
          await close().catch(() => {});
        }
      });
    }
  });
}
