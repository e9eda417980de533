/**
 * Reads write nothing and take no lock (issue 42), on each real store, through
 * `listSummaries` (which reads balances with the store's `readCredits`, as the
 * admin list does). On PostgreSQL, while another connection holds the key's
 * balance and window rows (an uncommitted `UPDATE`, a `FOR UPDATE`), the
 * listing answers within 2 s with the committed balance, and each statement it
 * sends leaves its transaction without a transaction id (a row inserted,
 * updated, deleted or locked would take one). On Redis (a server of the test's own), the
 * listing runs no command flagged `write` (`INFO commandstats`, `COMMAND INFO`).
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import pg from "pg";
import { ApiKeysService } from "../../api_keys/mod.ts";
import { createRateLimiter } from "../../rate_limits/limiter.ts";
import { createPostgresRateLimitStore } from "../../rate_limits/postgres/mod.ts";
import { createRedisRateLimitStore } from "../../rate_limits/redis/mod.ts";
import type { RateLimitStore } from "../../rate_limits/store.ts";
import { creditedKey, CreditedStorage } from "../api_keys/credited_storage.ts";
import { PEPPER_1 } from "../api_keys/helpers.ts";
import { databaseReady, probeDatabase } from "../postgres/prisma_client.ts";
import { hasRedisServer, startOwnRedis } from "./_own_redis.ts";
import { connectRedis, DATABASE_URL } from "./_services.ts";

/** How long a listing may take while the rows are held. */
const BOUND_MS = 2_000;

/**
 * A service on `store` holding one key of tenant `t1` with 10 credits and a
 * window policy, two of them spent: the store holds 8, the key's record 10.
 */
async function spentKey(store: RateLimitStore) {
  const storage = new CreditedStorage();
  const limiter = createRateLimiter({ store, timeoutMs: 10_000, logger: () => {} });
  const service = new ApiKeysService({ peppers: { 1: PEPPER_1 }, storage, limiter });
  const { id, key } = await creditedKey(service, storage, { remaining: 10 }, [
    { name: "minute", limit: 100, windowMs: 60_000 },
  ]);
  for (let i = 0; i < 2; i++) await service.authorize(key);
  const remaining = async () =>
    (await service.listSummaries("t1")).map((summary) => summary.credits?.remaining);
  assert.deepEqual(await remaining(), [8], "the store's balance, not the record's 10");
  return { id, remaining };
}

/** `promise`, or "hung" after `BOUND_MS`. */
function bounded<T>(promise: Promise<T>): Promise<T | "hung"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hung = new Promise<"hung">((resolve) =>
    timer = setTimeout(() => resolve("hung"), BOUND_MS)
  );
  return Promise.race([promise, hung]).finally(() => clearTimeout(timer));
}

if (databaseReady("reads on postgres take no lock", await probeDatabase(DATABASE_URL))) {
  describe("postgres store: listing balances", () => {
    it("answers the committed balance within 2 s while its rows are held, writing and locking nothing", async () => {
      const client = new pg.Client({ connectionString: DATABASE_URL });
      const locker = new pg.Client({ connectionString: DATABASE_URL });
      await Promise.all([client.connect(), locker.connect()]);
      // Each statement of the store in its own transaction, which says (before COMMIT) whether
      // it took a transaction id (any row written or locked takes one).
      const seen: { text: string; xid: string | null }[] = [];
      let queue: Promise<unknown> = Promise.resolve();
      const inTransaction = async (text: string, values?: unknown[]) => {
        await client.query("BEGIN");
        try {
          const result = await client.query(text, values);
          const { rows: [{ xid }] } = await client.query(
            "SELECT pg_current_xact_id_if_assigned()::text AS xid",
          );
          seen.push({ text, xid });
          return result;
        } finally {
          await client.query("COMMIT");
        }
      };
      const pool = {
        query: (statement: string | { text: string; values: unknown[] }, values?: unknown[]) => {
          const [text, args] = typeof statement === "string"
            ? [statement, values]
            : [statement.text, statement.values];
          const run = queue.then(() => inTransaction(text, args));
          queue = run.catch(() => {});
          return run;
        },
      };
      const store = createPostgresRateLimitStore({ pool, logger: () => {} });
      try {
        const { id, remaining } = await spentKey(store);
        await locker.query("BEGIN");
        const balances = await locker.query(
          "UPDATE credit_balances SET balance = 0 WHERE strpos(subject, $1) > 0",
          [id],
        );
        const windows = await locker.query(
          "SELECT 1 FROM rate_limit_buckets WHERE strpos(subject, $1) > 0 FOR UPDATE",
          [id],
        );
        assert.deepEqual([balances.rowCount, windows.rowCount], [1, 1], "the key's rows are held");
        seen.length = 0;
        const started = Date.now();
        const listed = await bounded(remaining());
        const took = Date.now() - started;
        await locker.query("ROLLBACK");
        console.log(`postgres: listed in ${took} ms while the key's rows were held`);
        assert.notEqual(listed, "hung", `the listing waited for the held rows (${BOUND_MS} ms)`);
        assert.deepEqual(listed, [8], "the committed balance");
        assert.ok(seen.some((s) => /\bcredit_read\(/.test(s.text)), "read through credit_read");
        assert.deepEqual(
          seen.filter((s) => s.xid !== null),
          [],
          "statements that wrote or locked",
        );
      } finally {
        await locker.query("ROLLBACK").catch(() => {});
        store.close();
        await queue;
        await Promise.all([client.end(), locker.end()]);
      }
    });
  });
}

if (
  databaseReady(
    "reads on redis write nothing",
    hasRedisServer() ? undefined : "redis-server is not installed",
  )
) {
  describe("redis store: listing balances", () => {
    const own = startOwnRedis();
    after(async () => await (await own).stop());

    it("runs no write command (INFO commandstats of a server of its own)", async () => {
      const client = await connectRedis((await own).url, 5_000, undefined, false);
      const store = createRedisRateLimitStore({ client, logger: () => {} });
      /** Calls per command so far (`cmdstat_hset:calls=3,...` → hset: 3). */
      const calls = async () =>
        new Map(
          [...(await client.info("commandstats")).matchAll(/^cmdstat_(\S+):calls=(\d+)/gm)]
            .map(([, name, n]) => [name, Number(n)]),
        );
      try {
        const { remaining } = await spentKey(store);
        const before = await calls();
        assert.deepEqual(await remaining(), [8]);
        const after = await calls();
        const ran = [...after].filter(([name, n]) => n > (before.get(name) ?? 0) && name !== "info")
          .map(([name]) => name);
        assert.ok(ran.some((name) => /^eval/.test(name)), `a script ran: ${ran.join(", ")}`);
        const writes = [];
        for (const name of ran) {
          const [info] = await client.sendCommand(["COMMAND", "INFO", name]) as unknown[][];
          if ((info[2] as string[]).includes("write")) writes.push(name);
        }
        assert.deepEqual(writes, [], `write commands among ${ran.join(", ")}`);
      } finally {
        store.close();
        client.destroy();
      }
    });
  });
}
