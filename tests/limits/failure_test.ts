/**
 * The failure policy on real stores cut mid-run (a loopback proxy in front of
 * the server, stopped): "open" passes every check and reports the metric,
 * "closed" reports unavailable; no check waits longer than timeoutMs + 1,000 ms.
 * "local" enforces each policy per instance at floor(limit / instances) and
 * refuses credit spends; the throttler storage answers by the failure policy.
 * Connections gone silent (sockets open, the proxy forwarding nothing) are
 * replaced: PostgreSQL's by the store, Redis's by the docs' client options.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import pg from "pg";
import { TcpProxy } from "../postgres/tcp_proxy.ts";
import { createPostgresRateLimitStore } from "../../rate_limits/postgres/mod.ts";
import { createRedisRateLimitStore } from "../../rate_limits/redis/mod.ts";
import { createRateLimiter, type RateLimiterMetric } from "../../rate_limits/limiter.ts";
import { createThrottlerStorage } from "../../rate_limits/throttler.ts";
import {
  checkOnce,
  DATABASE_URL,
  freshSubject,
  loadClient,
  openStore,
  readyStores,
  REDIS_URL,
} from "./_services.ts";
import type * as redisModule from "redis";

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

  describe(`${kind} store stopped mid-run: the bounded fallback and the throttler storage`, () => {
    /** A store behind a loopback proxy the test stops; `close` ends both. */
    const cut = async () => {
      const target = new URL(kind === "postgres" ? DATABASE_URL! : REDIS_URL!);
      const proxy = new TcpProxy(target.hostname, Number(target.port));
      target.port = String(proxy.start());
      const { store, close } = await openStore(kind, target.href);
      return {
        store,
        stop: () => proxy.stop(),
        close: async () => {
          proxy.stop();
          await close().catch(() => {});
        },
      };
    };

    it("local: each instance enforces floor(limit / instances) while the store is down, and refuses credit spends", async () => {
      const { store, stop, close } = await cut();
      const limiter = createRateLimiter({
        store,
        onStoreError: "local",
        instances: 4,
        timeoutMs: TIMEOUT_MS,
        logger: () => {},
      });
      const policy = [{ name: "api", limit: 101, windowMs: 60_000 }];
      const subject = freshSubject("local");
      try {
        await checkOnce(store, [{ kind: "window", subject, ...policy[0], cost: 0 }]); // connects
        const before = await limiter.check(subject, policy);
        assert.equal(before.outcome, "store");
        stop();
        const after = [];
        for (let i = 0; i < 40; i++) after.push(await limiter.check(subject, policy));
        assert.ok(after.every((r) => r.unavailable && r.outcome === "local"));
        assert.equal(after.filter((r) => r.allowed).length, 25, "floor(101 / 4) per instance");
        const spend = await limiter.check(subject, [], { credits: { initial: 1_000 } });
        assert.equal(spend.allowed, false, "a balance cannot be known without its store");
      } finally {
        await close();
      }
    });

    for (const onStoreError of ["open", "closed"] as const) {
      it(`throttler storage, ${onStoreError}: answers by the failure policy, never throws`, async () => {
        const { store, stop, close } = await cut();
        const throttlers = [{ name: "default", ttl: 60_000, limit: 5 }];
        const limiter = createRateLimiter({
          store,
          onStoreError,
          timeoutMs: TIMEOUT_MS,
          logger: () => {},
        });
        const storage = createThrottlerStorage(limiter, { throttlers });
        const tracker = freshSubject("throttler");
        try {
          await checkOnce(store, [{
            kind: "window",
            subject: tracker,
            name: "warm",
            limit: 1,
            windowMs: 60_000,
            cost: 0,
          }]);
          const counted = await storage.increment(tracker, 60_000, 5, 60_000, "default");
          assert.equal(counted.totalHits, 1);
          stop();
          for (let i = 0; i < 10; i++) {
            const hit = await storage.increment(tracker, 60_000, 5, 60_000, "default");
            assert.equal(hit.isBlocked, onStoreError === "closed", `hit ${i}`);
          }
        } finally {
          await close();
        }
      });
    }
  });

  if (kind === "redis") {
    it("redis: a connection gone silent (socket open, nothing answered) under steady checks counts again within 10 s with docs/rate-limits.md's client options, never without them", async () => {
      const target = new URL(REDIS_URL!);
      const proxy = new TcpProxy(target.hostname, Number(target.port));
      target.port = String(proxy.start());
      const { createClient } = loadClient<typeof redisModule>("redis").module;
      const url = target.href;
      const clients = {
        // As docs/rate-limits.md ("Production setup") sets it up.
        documented: createClient({
          url,
          disableOfflineQueue: true,
          pingInterval: 1_000,
          socket: {
            socketTimeout: 3_000,
            reconnectStrategy: (retries) => Math.min(50 * 2 ** retries, 2_000),
          },
        }),
        bare: createClient({ url, disableOfflineQueue: true }),
        // node-redis's own reconnectStrategy never reconnects after a socket timeout.
        noReconnect: createClient({
          url,
          disableOfflineQueue: true,
          socket: { socketTimeout: 3_000 },
        }),
      };
      const names = Object.keys(clients) as (keyof typeof clients)[];
      const policy = [{ name: "api", limit: 1_000_000, windowMs: 60_000 }];
      const subject = freshSubject("redis-silent");
      const recovered = { documented: -1, bare: -1, noReconnect: -1 };
      const thrown: string[] = [];
      try {
        const limiters = await Promise.all(names.map(async (name) => {
          await clients[name].connect();
          const store = createRedisRateLimitStore({ client: clients[name], logger: () => {} });
          const limiter = createRateLimiter({
            store,
            onStoreError: "closed",
            timeoutMs: 300,
            logger: () => {},
          });
          assert.equal((await limiter.check(subject, policy)).outcome, "store");
          return limiter;
        }));
        proxy.silenceOpen();
        const start = performance.now();
        // Steady traffic: a check on each limiter every 20 ms, none waiting for the one before.
        await new Promise<void>((done) => {
          const tick = setInterval(() => {
            if (performance.now() - start > 10_000) return clearInterval(tick), done();
            names.forEach((name, i) =>
              limiters[i].check(subject, policy).then((result) => {
                if (result.outcome === "store" && recovered[name] < 0) {
                  recovered[name] = performance.now() - start;
                }
              }, (error: Error) => void thrown.push(`${name}: ${error.message}`))
            );
          }, 20);
        });
        console.log(
          `redis silent connection: counting again after ${recovered.documented.toFixed(0)} ms ` +
            `with the documented options, ${recovered.bare.toFixed(0)} ms without (-1: never)`,
        );
        assert.ok(recovered.documented >= 0, "never counted again with the documented options");
        assert.equal(recovered.bare, -1, "the bare client's connection recovered on its own");
        assert.equal(recovered.noReconnect, -1);
        assert.equal(clients.noReconnect.isOpen, false, "closed for good at its socket timeout");
        assert.ok(thrown.length > 0 && thrown.every((line) => line.startsWith("noReconnect:")));
        assert.match(thrown[0], /not connected/);
      } finally {
        proxy.stop();
        for (const client of Object.values(clients)) client.destroy();
      }
    });
  }

  if (kind !== "postgres") continue;
  it("postgres: a pool whose open connections all go silent (sockets open, nothing answered) counts again within seconds: each statement gives up its connection past its deadline", async () => {
    const target = new URL(DATABASE_URL!);
    const proxy = new TcpProxy(target.hostname, Number(target.port));
    target.port = String(proxy.start());
    // A pool of 10 shared with the application: a burst leaves 10 idle connections.
    const { store, close } = await openStore(kind, target.href, 10);
    const limiter = createRateLimiter({
      store,
      onStoreError: "closed",
      timeoutMs: 300,
      logger: () => {},
    });
    const policy = [{ name: "api", limit: 1_000_000, windowMs: 60_000 }];
    const subject = freshSubject("silent");
    try {
      await Promise.all(
        Array.from(
          { length: 10 },
          () => checkOnce(store, [{ kind: "window", subject, ...policy[0], cost: 0 }]),
        ),
      );
      assert.equal((await limiter.check(subject, policy)).outcome, "store");
      proxy.silenceOpen();
      const start = performance.now();
      let recovered = -1;
      while (performance.now() - start < 15_000) {
        const result = await limiter.check(subject, policy);
        if (result.outcome === "store") {
          recovered = performance.now() - start;
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      console.log(`postgres silent connections: counting again after ${recovered.toFixed(0)} ms`);
      assert.ok(recovered >= 0, "never counted again with its connections silent");
      assert.ok(recovered < 12_000, `${recovered} ms`);
    } finally {
      proxy.stop();
      await close().catch(() => {});
    }
  });
}

describe("a store's error in messages and lines", () => {
  it("a connection string pg cannot parse (a bug: the check rejects) never puts its password in the error or the log", async () => {
    const pool = new pg.Pool({
      connectionString: "postgresql://app:s3cretPW@db.internal:99999/app",
    });
    const lines: string[] = [];
    const limiter = createRateLimiter({
      store: createPostgresRateLimitStore({ pool, logger: (line) => lines.push(line) }),
      logger: (line) => lines.push(line),
    });
    const error = await limiter.check("k", [{ name: "api", limit: 1, windowMs: 1_000 }]).then(
      () => assert.fail("a bug never passes"),
      (e: Error) => e,
    );
    assert.equal(error.name, "TypeError");
    assert.match(error.message, /postgresql:\/\/\*\*\*@db\.internal/);
    for (const text of [error.message, ...lines]) assert.ok(!text.includes("s3cretPW"), text);
    await pool.end();
  });
});
