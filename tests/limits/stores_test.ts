/**
 * The remote stores' contract on the real services: a check past its deadline
 * is answered `null` and applies nothing; reads write nothing and take no
 * lock, nor does a refused check of window counters on PostgreSQL; `ready()` names a misconfiguration; a stalled server (the test's own
 * redis-server stopped with SIGSTOP, a PostgreSQL row lock held) applies
 * nothing late and every call settles, and a frozen one leaves at most
 * `MAX_IN_FLIGHT + MAX_LET_GO` calls pending under a limiter; an outage (the test's own redis-server
 * killed and restarted, PostgreSQL backends terminated) never ends the process
 * and counting resumes within 15 s; a spend or a balance change waiting on a
 * PostgreSQL balance's lock and cut (backend terminated, `lock_timeout`,
 * `statement_timeout`) applies nothing; one hot key on PostgreSQL with 1,000
 * checks in flight never passes its limit or its credits.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import pg from "pg";
import { createClient } from "redis";
import { MAX_IN_FLIGHT, MAX_LET_GO, SETTLE_MS } from "../../rate_limits/_door.ts";
import { createRateLimiter, type RateLimiter } from "../../rate_limits/limiter.ts";
import { createMemoryRateLimitStore } from "../../rate_limits/memory_store.ts";
import { compileRateLimitPolicies } from "../../rate_limits/policy.ts";
import {
  createPostgresRateLimitStore,
  type PostgresRateLimitStore,
} from "../../rate_limits/postgres/mod.ts";
import { createRedisRateLimitStore } from "../../rate_limits/redis/mod.ts";
import type {
  CounterResult,
  CreditCounter,
  RateLimitStore,
  StoreCheck,
  WindowCounter,
} from "../../rate_limits/store.ts";
import {
  checkOnce,
  connectRedis,
  DATABASE_URL,
  freshSubject,
  migratedSchema,
  openStore,
  readyStores,
} from "./_services.ts";
import { anchorContract } from "../rate_limits/_anchor_contract.ts";
import { beforeContract } from "../rate_limits/_before_contract.ts";
import { hasRedisServer, type OwnRedis, startOwnRedis } from "./_own_redis.ts";

const RECOVERY_BOUND_MS = 15_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A window counter and a credit counter of a fresh subject. */
function countersOf(label: string, limit = 1_000, initial = 1_000) {
  const subject = freshSubject(label);
  const window: WindowCounter = {
    kind: "window",
    subject,
    name: "w",
    limit,
    windowMs: 600_000,
    cost: 1,
  };
  const credit: CreditCounter = { kind: "credit", subject, name: "c", cost: 1, initial };
  return { subject, window, credit };
}

const MIGRATIONS = new URL("../../prisma/migrations/", import.meta.url);

/** The numbered migrations (`prisma/migrations/NNNN_name`), in the order they apply. */
async function migrationNames(): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(MIGRATIONS)) {
    if (entry.isDirectory) names.push(entry.name);
  }
  return names.sort();
}

/** Applies migration `name` through `client` (into the schema of its search_path). */
async function applyMigration(client: pg.Client, name: string): Promise<void> {
  await client.query(await Deno.readTextFile(new URL(`${name}/migration.sql`, MIGRATIONS)));
}

/**
 * One statement run by `admin` in a transaction of its own: its rows, and what it did to
 * `rate_limit_buckets` (index scans, rows inserted, updated and updated HOT), read from the
 * counters the transaction has not reported yet.
 */
async function bucketWork(admin: pg.Client, text: string, values: unknown[]) {
  const counts = async (): Promise<Record<string, number>> =>
    (await admin.query(
      "SELECT idx_scan::int AS scans, n_tup_ins::int AS inserted, n_tup_upd::int AS updated, " +
        "n_tup_hot_upd::int AS hot FROM pg_stat_xact_user_tables " +
        "WHERE relid = 'rate_limit_buckets'::regclass",
    )).rows[0];
  await admin.query("BEGIN");
  try {
    const before = await counts();
    const { rows } = await admin.query(text, values);
    const after = await counts();
    const work = Object.fromEntries(
      Object.keys(after).map((name) => [name, after[name] - before[name]]),
    );
    return { rows, work };
  } finally {
    await admin.query("COMMIT");
  }
}

/**
 * Runs `body` with `admin` on a fresh migrated schema (`migratedSchema`), and a store and a
 * limiter (`onStoreError` "open", silent) on a pool of one connection to it; then drops it.
 */
async function onMigratedSchema(
  label: string,
  body: (
    on: { schema: string; admin: pg.Client; store: PostgresRateLimitStore; limiter: RateLimiter },
  ) => Promise<void>,
): Promise<void> {
  const { schema, admin, drop } = await migratedSchema(label);
  const pool = new pg.Pool({
    connectionString: DATABASE_URL,
    max: 1,
    options: `-c search_path=${schema}`,
  });
  const store = createPostgresRateLimitStore({ pool, logger: () => {} });
  try {
    await body({
      schema,
      admin,
      store,
      limiter: createRateLimiter({ store, logger: () => {} }),
    });
  } finally {
    store.close();
    await pool.end();
    await drop();
  }
}

/** Window units and credits left, read by a check of cost 0. */
async function left(store: RateLimitStore, window: WindowCounter, credit: CreditCounter) {
  const [w, c] = await checkOnce(store, [{ ...window, cost: 0 }, { ...credit, cost: 0 }]);
  return { window: w.remaining, credits: c.remaining };
}

/** Checks answered allowed among settled batches. */
function allowedOf(
  settled: PromiseSettledResult<{ results: readonly (readonly CounterResult[] | null)[] }>[],
) {
  let allowed = 0;
  let answered = 0;
  for (const s of settled) {
    if (s.status !== "fulfilled") continue;
    for (const r of s.value.results) {
      if (r === null) continue;
      answered++;
      if (r.every((c) => c.allowed)) allowed++;
    }
  }
  return { allowed, answered };
}

/** `perBatch` checks of `counters` each with a deadline `deadlineMs` from now. */
function batchOf(
  counters: StoreCheck["counters"],
  perBatch: number,
  deadlineMs: number,
): StoreCheck[] {
  const deadline = Date.now() + deadlineMs;
  return Array.from({ length: perBatch }, () => ({ counters, deadline }));
}

/**
 * Sends a batch of 50 checks every 20 ms for `ms`, each with a deadline 100 ms
 * out; resolves to every call, settled.
 */
async function sendDuring(store: RateLimitStore, counters: StoreCheck["counters"], ms: number) {
  const calls: Promise<{ results: readonly (readonly CounterResult[] | null)[] }>[] = [];
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const call = store.checkBatch(batchOf(counters, 50, 100));
    call.catch(() => {}); // settled below; a rejection is not unhandled meanwhile
    calls.push(call);
    await sleep(20);
  }
  return calls;
}

/** Ms until a check of `counters` is counted again (polled every 50 ms), -1 past 15 s. */
async function recovery(store: RateLimitStore, counters: StoreCheck["counters"]): Promise<number> {
  const start = Date.now();
  while (Date.now() - start < RECOVERY_BOUND_MS) {
    try {
      await checkOnce(store, counters, 1_000);
      return Date.now() - start;
    } catch {
      await sleep(50);
    }
  }
  return -1;
}

for (const kind of await readyStores("remote store contract")) {
  describe(`${kind} store on the batch contract`, () => {
    it("answers null for a check past its deadline and applies nothing of it", async () => {
      const { store, close } = await openStore(kind);
      try {
        const { window, credit } = countersOf("deadline", 10, 10);
        const past = Date.now() - 1_000;
        const { results } = await store.checkBatch([
          { counters: [window, credit], deadline: past },
          { counters: [window, credit], deadline: Date.now() + 30_000 },
          { counters: [window, { ...credit, cost: 5 }], deadline: past },
        ]);
        assert.equal(results[0], null);
        assert.deepEqual(results[1]?.map((r) => [r.allowed, r.remaining]), [[true, 9], [true, 9]]);
        assert.equal(results[2], null);
        assert.deepEqual(await left(store, window, credit), { window: 9, credits: 9 });
        const change = store.changeCredits!;
        assert.equal(await change(credit, { add: 100 }, past), null);
        assert.equal((await change(credit, { add: 1 }, Date.now() + 30_000))?.remaining, 10);
      } finally {
        await close();
      }
    });

    it("keeps a balance across a refill rule change ({ anchor: true }: the refill due taken, anchored at the change; real time)", async () => {
      const { store, close } = await openStore(kind);
      try {
        await anchorContract(store, freshSubject("anchor"));
      } finally {
        await close();
      }
    });

    it("a credit change answers the balance before (the refill due applied), from its own step", async () => {
      const { store, close } = await openStore(kind);
      try {
        await beforeContract(store, freshSubject("before"));
      } finally {
        await close();
      }
    });

    it("through a limiter: compiled policies checked concurrently without options count each check's own subject", async () => {
      const { store, close } = await openStore(kind);
      try {
        const limiter = createRateLimiter({ store, logger: () => {}, timeoutMs: 30_000 });
        const policies = compileRateLimitPolicies([{ name: "own", limit: 10, windowMs: 60_000 }]);
        const subjects = ["a", "b", "c", "d"].map((s) => freshSubject(`own-${s}`));
        // The first is sent at once (an idle limiter), the others queued in the same task.
        await Promise.all(subjects.map((subject) => limiter.check(subject, policies)));
        for (const subject of subjects) {
          const { policies: [own] } = await limiter.check(subject, policies, { cost: 0 });
          assert.equal(own.remaining, 9, `${subject}: one unit counted`);
        }
      } finally {
        await close();
      }
    });

    it("counts a policy of the longest window compiled (10^14 ms): the store answers, never its failure policy", async () => {
      const { store, close } = await openStore(kind);
      const subject = freshSubject("long-window");
      try {
        const limiter = createRateLimiter({
          store,
          onStoreError: "closed",
          timeoutMs: 30_000,
          logger: () => {},
        });
        const policies = compileRateLimitPolicies([{ name: "long", limit: 1, windowMs: 1e14 }]);
        const [first, second] = [
          await limiter.check(subject, policies),
          await limiter.check(subject, policies),
        ];
        assert.deepEqual([first.allowed, first.outcome], [true, "store"]);
        assert.deepEqual([second.allowed, second.outcome], [false, "store"]);
      } finally {
        await close();
        await dropWindow(kind, subject, "long", 1e14); // it would stay for 10^14 ms
      }
    });

    it("one batch, two checks of one balance under two refill rules (changed while they queued): each check's own rule, as the memory store", async () => {
      const { store, close } = await openStore(kind);
      try {
        const hour = 3_600_000;
        const initialAt = Date.now() - 2 * hour; // a refill boundary since, for either rule
        /** Answers to a batch of `first` then `second` of one balance, and the balance after. */
        const answers = async (on: RateLimitStore, first: CreditCounter, second: CreditCounter) => {
          const deadline = Date.now() + 30_000;
          const { results } = await on.checkBatch([
            { counters: [first], deadline },
            { counters: [second], deadline },
          ]);
          const [after] = await checkOnce(on, [{ ...second, cost: 0 }]);
          return [...results.map((r) => r?.map((c) => [c.allowed, c.remaining])), after.remaining];
        };
        const hourly = (amount: number) => ({ amount, everyMs: hour });
        type Spend = Pick<CreditCounter, "cost" | "refill">;
        const cases: [string, Spend, Spend, unknown][] = [
          [
            "no refill, then 100 an hour: the second spends the refill",
            { cost: 0 },
            { cost: 1, refill: hourly(100) },
            [[[true, 0]], [[true, 99]], 99],
          ],
          [
            "100, then 50 an hour: the first refills, the second finds the boundary taken; both spend",
            { cost: 5, refill: hourly(100) },
            { cost: 5, refill: hourly(50) },
            [[[true, 95]], [[true, 90]], 90],
          ],
        ];
        for (const [what, first, second, expected] of cases) {
          for (const on of [createMemoryRateLimitStore(), store]) {
            const balance = {
              kind: "credit" as const,
              subject: freshSubject("rules"),
              name: "c",
              initial: 0,
              initialAt,
            };
            const got = await answers(on, { ...balance, ...first }, { ...balance, ...second });
            assert.deepEqual(got, expected, `${on.name}: ${what}`);
          }
        }
      } finally {
        await close();
      }
    });

    it("reads balances with the refill due counted, writing nothing (no row or key created)", async () => {
      const { store, close } = await openStore(kind);
      const { subject, credit } = countersOf("read");
      const refilled = { ...credit, initial: 10, refill: { amount: 50, everyMs: 400 } };
      try {
        await checkOnce(store, [refilled]); // 9 left, as of the last boundary
        await sleep(450); // a refill is due
        const [read, missing] = await store.readCredits!([refilled, { ...refilled, name: "none" }]);
        assert.equal(read?.remaining, 50);
        assert.equal(missing, null);
        assert.deepEqual(await rawBalance(kind, subject, "c"), 9, "the refill was not written");
        assert.equal(await rawBalance(kind, subject, "none"), undefined, "nothing created");
      } finally {
        await close();
      }
    });

    it("ready(): a misconfiguration is a TypeError naming it; a store merely down rejects otherwise", async () => {
      if (kind === "redis") {
        const never = createClient({ url: "redis://127.0.0.1:1", disableOfflineQueue: true });
        const store = createRedisRateLimitStore({ client: never, logger: () => {} });
        await assert.rejects(
          store.ready(),
          (e) => e instanceof TypeError && /connect\(\)/.test(e.message),
        );
        store.close();
        return;
      }
      const hidden = new pg.Pool({
        connectionString: DATABASE_URL,
        max: 1,
        options: "-c search_path=pg_catalog",
      });
      const down = new pg.Pool({ connectionString: "postgresql://x:y@127.0.0.1:1/none", max: 1 });
      try {
        await assert.rejects(
          createPostgresRateLimitStore({ pool: hidden }).ready(),
          (e) =>
            e instanceof TypeError &&
            /apply prisma\/migrations\/0009_credit_balances/.test(e.message),
        );
        await assert.rejects(
          createPostgresRateLimitStore({ pool: down, logger: () => {} }).ready(),
          (e) => !(e instanceof TypeError),
        );
      } finally {
        await Promise.all([hidden.end(), down.end()]);
      }
    });
  });
}

/** Deletes the window counter of (`subject`, `name`, `windowMs`) a test made. */
async function dropWindow(kind: string, subject: string, name: string, windowMs: number) {
  if (kind === "redis") {
    const client = await connectRedis(Deno.env.get("REDIS_URL")!);
    try {
      await client.del(`rl:{${subject}}:${subject}:${name}:${windowMs}:w`);
    } finally {
      client.destroy();
    }
    return;
  }
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
  try {
    await pool.query(
      "DELETE FROM rate_limit_buckets WHERE subject = $1 AND name = $2 AND window_ms = $3",
      [subject, name, windowMs],
    );
  } finally {
    await pool.end();
  }
}

/** A balance as stored (undefined when the store holds none), bypassing the store. */
async function rawBalance(
  kind: string,
  subject: string,
  name: string,
): Promise<number | undefined> {
  if (kind === "redis") {
    const client = await connectRedis(Deno.env.get("REDIS_URL")!);
    try {
      const b = await client.hGet(`rl:{${subject}}:${name}:c`, "b");
      return b == null ? undefined : Number(b);
    } finally {
      client.destroy();
    }
  }
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
  try {
    const { rows } = await pool.query(
      "SELECT balance::float8 AS b FROM credit_balances WHERE subject = $1 AND name = $2",
      [subject, name],
    );
    return rows[0]?.b;
  } finally {
    await pool.end();
  }
}

describe("redis store on its own redis-server", { skip: !hasRedisServer() }, () => {
  let own: OwnRedis | undefined;
  after(async () => await own?.stop());

  it("stalled (SIGSTOP): applies nothing late, every call settles, counts right after", async () => {
    own = await startOwnRedis();
    const client = await connectRedis(own.url, 5_000, undefined, false);
    const store = createRedisRateLimitStore({ client, logger: () => {} });
    try {
      const { window, credit } = countersOf("stall");
      const before = allowedOf([{
        status: "fulfilled",
        value: await store.checkBatch(batchOf([window, credit], 10, 5_000)),
      }]);
      const heap = process.memoryUsage().heapUsed;
      own.pause();
      const calls = await sendDuring(store, [window, credit], 2_000);
      own.resume();
      const started = Date.now();
      const settled = await Promise.allSettled(calls);
      const during = allowedOf(settled);
      console.log(
        `redis stall: ${calls.length * 50} checks sent, ${during.answered} answered, all settled ` +
          `${Date.now() - started} ms after resume; heap +${
            ((process.memoryUsage().heapUsed - heap) / 1e6).toFixed(1)
          } MB`,
      );
      await sleep(200); // anything still queued in the server runs now
      const allowed = before.allowed + during.allowed;
      assert.deepEqual(await left(store, window, credit), {
        window: 1_000 - allowed,
        credits: 1_000 - allowed,
      });
      await checkOnce(store, [window, credit]);
      assert.deepEqual(await left(store, window, credit), {
        window: 999 - allowed,
        credits: 999 - allowed,
      });
    } finally {
      store.close();
      client.destroy();
    }
  });

  it("frozen 7 s (SIGSTOP) under a limiter: at most MAX_IN_FLIGHT + MAX_LET_GO store calls unsettled, every check answered by its deadline, the store answers again after", async () => {
    own ??= await startOwnRedis();
    const client = await connectRedis(own.url, 5_000, undefined, false);
    const redis = createRedisRateLimitStore({ client, logger: () => {} });
    let unsettled = 0;
    let most = 0;
    const store: RateLimitStore = new Proxy(redis, {
      get(target, key) {
        const value = Reflect.get(target, key);
        if (key !== "checkBatch") return typeof value === "function" ? value.bind(target) : value;
        return (checks: readonly StoreCheck[]) => {
          most = Math.max(most, ++unsettled);
          const call = target.checkBatch(checks);
          call.then(() => unsettled--, () => unsettled--);
          return call;
        };
      },
    });
    const timeoutMs = 300;
    const limiter = createRateLimiter({
      store,
      onStoreError: "closed",
      timeoutMs,
      logger: () => {},
    });
    const policies = [{ name: "api", limit: 1_000_000, windowMs: 60_000 }];
    try {
      await limiter.ready();
      own.pause();
      const waits: Promise<number>[] = [];
      const started = performance.now();
      try {
        while (performance.now() - started < 3.5 * SETTLE_MS) {
          const sentAt = performance.now();
          for (let i = 0; i < 20; i++) {
            waits.push(
              limiter.check(freshSubject("frozen"), policies).then((r) => {
                assert.equal(r.outcome, "closed");
                return performance.now() - sentAt;
              }),
            );
          }
          await sleep(50);
        }
        const slowest = Math.max(...await Promise.all(waits));
        assert.ok(slowest < timeoutMs + 200, `a check answered after ${slowest} ms`);
        assert.ok(most <= MAX_IN_FLIGHT + MAX_LET_GO, `${most} store calls unsettled`);
      } finally {
        own.resume();
      }
      const resumed = performance.now();
      let answer;
      do answer = await limiter.check(freshSubject("thawed"), policies); while (
        answer.outcome !== "store" && performance.now() - resumed < 5_000
      );
      console.log(
        `redis frozen ${3.5 * SETTLE_MS} ms: at most ${most} store calls unsettled; the store ` +
          `answered ${Math.round(performance.now() - resumed)} ms after resume`,
      );
      assert.equal(answer.outcome, "store");
    } finally {
      redis.close();
      client.destroy();
    }
  });

  it("killed and restarted: the process lives, calls reject meanwhile, counting resumes within 15 s", async () => {
    own ??= await startOwnRedis();
    // No listener of the test's own: the store's keeps the process alive.
    const client = await connectRedis(own.url, 5_000, undefined, false);
    const lines: string[] = [];
    const store = createRedisRateLimitStore({ client, logger: (line) => lines.push(line) });
    try {
      const { window, credit } = countersOf("outage");
      await checkOnce(store, [window, credit]);
      await own.kill();
      for (let i = 0; i < 10; i++) {
        await assert.rejects(
          store.checkBatch(batchOf([window, credit], 5, 100)),
          (e) => !(e instanceof TypeError),
        );
        await sleep(50);
      }
      await own.restart();
      const recovered = await recovery(store, [window, credit]);
      console.log(
        `redis outage: counting resumed ${recovered} ms after the restart; ${lines.length} log line(s)`,
      );
      assert.ok(recovered >= 0, "counting resumed within 15 s");
      assert.ok(lines.length >= 1 && lines.length <= 2, lines.join("\n"));
      // The restarted server lost its data: counting starts again from there.
      assert.deepEqual(await left(store, window, credit), { window: 999, credits: 999 });
    } finally {
      store.close();
      client.destroy();
    }
  });
});

if (DATABASE_URL) {
  describe("postgres store under stalls, outages and a hot key", () => {
    it("a row lock held elsewhere (stall): applies nothing late, every call settles, counts right after", async () => {
      const { store, close } = await openStore("postgres");
      const holder = new pg.Client({ connectionString: DATABASE_URL });
      await holder.connect();
      try {
        const { subject, window, credit } = countersOf("pgstall");
        await checkOnce(store, [window, credit]);
        await holder.query("BEGIN");
        await holder.query(
          "SELECT 1 FROM rate_limit_buckets WHERE subject = $1 AND name = 'w' FOR UPDATE",
          [subject],
        );
        const calls = await sendDuring(store, [window, credit], 2_000);
        await holder.query("COMMIT");
        const settled = await Promise.allSettled(calls);
        const during = allowedOf(settled);
        console.log(
          `postgres stall: ${calls.length * 50} checks sent, ${during.answered} answered, ` +
            `${settled.filter((s) => s.status === "rejected").length} calls rejected`,
        );
        const allowed = 1 + during.allowed;
        assert.deepEqual(await left(store, window, credit), {
          window: 1_000 - allowed,
          credits: 1_000 - allowed,
        });
      } finally {
        await holder.end();
        await close();
      }
    });

    it("a row lock held elsewhere (stall) against checks of one window counter, each alone (counted in place: the UPDATE waits on the lock, which is released unchanged): applies nothing late, every call settles, counts right after", async () => {
      const { store, close } = await openStore("postgres");
      const holder = new pg.Client({ connectionString: DATABASE_URL });
      await holder.connect();
      try {
        const { subject, window } = countersOf("pgstallone");
        await checkOnce(store, [window]); // the row made
        await checkOnce(store, [window]); // then counted in place
        await holder.query("BEGIN");
        await holder.query(
          "SELECT 1 FROM rate_limit_buckets WHERE subject = $1 AND name = 'w' FOR UPDATE",
          [subject],
        );
        const calls: ReturnType<RateLimitStore["checkBatch"]>[] = [];
        const until = Date.now() + 1_000;
        while (Date.now() < until) {
          const call = store.checkBatch([{ counters: [window], deadline: Date.now() + 100 }]);
          call.catch(() => {}); // settled below
          calls.push(call);
          await sleep(10);
        }
        await holder.query("COMMIT"); // the row as it was: a waiting count in place matches it
        const settled = await Promise.allSettled(calls);
        const during = allowedOf(settled);
        console.log(
          `postgres stall, one counter: ${calls.length} checks sent, ${during.answered} answered ` +
            `(${during.allowed} allowed), ` +
            `${settled.filter((s) => s.status === "rejected").length} calls rejected`,
        );
        assert.ok(calls.length >= 20, `${calls.length} checks sent`);
        const [w] = await checkOnce(store, [{ ...window, cost: 0 }]);
        assert.equal(w.remaining, 1_000 - 2 - during.allowed);
        assert.equal((await checkOnce(store, [window]))[0].remaining, 1_000 - 3 - during.allowed);
      } finally {
        await holder.end();
        await close();
      }
    });

    it("backends terminated: the process lives, counting resumes within 15 s", async () => {
      const name = `outage-${crypto.randomUUID().slice(0, 8)}`;
      const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 3, application_name: name });
      const lines: string[] = [];
      // No listener of the test's own: the store's keeps the process alive.
      const store = createPostgresRateLimitStore({ pool, logger: (line) => lines.push(line) });
      const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
      try {
        const { window, credit } = countersOf("pgoutage");
        await Promise.all([0, 1, 2].map(() => checkOnce(store, [window, credit])));
        const { rows } = await admin.query(
          "SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = $1",
          [name],
        );
        assert.ok(rows[0].n >= 1);
        await sleep(100); // the idle clients see their backends go
        const recovered = await recovery(store, [window, credit]);
        const allowed = recovered >= 0 ? 4 : 3;
        console.log(
          `postgres outage: counting resumed ${recovered} ms after the termination; ${lines.length} log line(s)`,
        );
        assert.ok(recovered >= 0, "counting resumed within 15 s");
        assert.ok(lines.length >= 1, "the store reported the terminated backends");
        assert.deepEqual(await left(store, window, credit), {
          window: 1_000 - allowed,
          credits: 1_000 - allowed,
        });
      } finally {
        store.close();
        await Promise.all([pool.end(), admin.end()]);
      }
    });

    it("a spend, a set and an add waiting on a balance's lock, cut by pg_terminate_backend, lock_timeout or statement_timeout: nothing applied, the spend refused, counts unchanged", async () => {
      for (const cut of ["terminated", "lock_timeout", "statement_timeout"] as const) {
        const name = `cut-${crypto.randomUUID().slice(0, 8)}`;
        const pool = new pg.Pool({
          connectionString: DATABASE_URL,
          max: 3,
          application_name: name,
          // Shorter than the limiter's deadline: the statement is cancelled first.
          ...(cut === "statement_timeout" ? { options: "-c statement_timeout=200" } : {}),
        });
        const limiter = createRateLimiter({
          store: createPostgresRateLimitStore({ pool, logger: () => {} }),
          onStoreError: "closed",
          timeoutMs: 600,
          logger: () => {},
        });
        const admin = new pg.Client({ connectionString: DATABASE_URL });
        const holder = new pg.Client({ connectionString: DATABASE_URL });
        await Promise.all([admin.connect(), holder.connect()]);
        try {
          const [key, tenant] = [freshSubject("cutkey"), freshSubject("cuttenant")];
          const policy = [{ name: "w", limit: 100, windowMs: 600_000 }];
          // A key's own balance and its tenant's pool, spent together with the key's policy.
          const own = { initial: 50, subject: key };
          const shared = { initial: 1_000, subject: tenant };
          assert.equal(
            (await limiter.check(key, policy, { credits: [own, shared] })).allowed,
            true,
          );
          await holder.query("BEGIN");
          await holder.query("SELECT 1 FROM credit_balances WHERE subject = $1 FOR UPDATE", [
            tenant,
          ]);
          const spend = limiter.check(key, policy, { credits: [own, shared], cost: 3 });
          const changes = [{ set: 5 }, { add: 7 }].map((change) =>
            limiter.changeCredits(tenant, shared, change).then(() => "applied", String)
          );
          if (cut === "terminated") {
            // The three wait on the lock (polled: on a loaded machine one may take a while to get there).
            for (let waited = 0; waited < 400; waited += 20) {
              await sleep(20);
              const { rows } = await admin.query(
                "SELECT count(*)::int AS n FROM pg_stat_activity " +
                  "WHERE application_name = $1 AND wait_event_type = 'Lock'",
                [name],
              );
              if (rows[0].n === 3) break;
            }
            const { rows } = await admin.query(
              "SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity " +
                "WHERE application_name = $1 AND wait_event_type = 'Lock'",
              [name],
            );
            assert.equal(rows[0].n, 3);
          }
          const refused = await spend;
          assert.deepEqual([refused.allowed, refused.outcome], [false, "closed"], cut);
          const reasons = await Promise.all(changes);
          // lock_timeout is the statement's deadline: the limiter's own may answer first.
          const why = {
            terminated: /terminating connection/,
            lock_timeout: /lock timeout|did not answer/,
            statement_timeout: /statement timeout/,
          }[cut];
          for (const reason of reasons) assert.match(reason, why, `${cut}: ${reason}`);
          await holder.query("COMMIT");
          const left = await limiter.readCredits([{ subject: key, credits: own }, {
            subject: tenant,
            credits: shared,
          }]);
          assert.deepEqual(left.map((b) => b.remaining), [49, 999], cut);
          const window = await limiter.check(key, policy, { cost: 0 });
          assert.equal(window.policies[0].remaining, 99, cut);
        } finally {
          await holder.end();
          await admin.end();
          await pool.end();
        }
      }
    });

    /**
     * A pool over `client` running each statement in its own transaction,
     * `inside(text)` called before its COMMIT.
     */
    function transactionPool(client: pg.Client, inside: (text: string) => Promise<void>) {
      return {
        query: async (
          statement: string | { text: string; values: unknown[] },
          values?: unknown[],
        ) => {
          const text = typeof statement === "string" ? statement : statement.text;
          await client.query("BEGIN");
          try {
            const result = await client.query(
              text,
              values ?? (statement as { values: unknown[] }).values,
            );
            await inside(text);
            return result;
          } finally {
            await client.query("COMMIT");
          }
        },
      };
    }

    /**
     * The `synchronous_commit` of each statement `exercise` sends through a store
     * made with `options`, as [function, setting] (each statement in its own
     * transaction on one client, its commit setting read before COMMIT), and the
     * session's setting after the last commit.
     */
    async function commitSettings(
      options: { durableWindows?: boolean },
      exercise: (store: ReturnType<typeof createPostgresRateLimitStore>) => Promise<unknown>,
    ) {
      const client = new pg.Client({ connectionString: DATABASE_URL });
      await client.connect();
      const seen: [string, string][] = [];
      const pool = transactionPool(client, async (text) => {
        const { rows } = await client.query("SHOW synchronous_commit");
        seen.push([/FROM (\w+)\(/.exec(text)?.[1] ?? "", rows[0].synchronous_commit]);
      });
      const store = createPostgresRateLimitStore({ pool, logger: () => {}, ...options });
      try {
        await exercise(store);
        const { rows } = await client.query("SHOW synchronous_commit");
        return { seen, after: rows[0].synchronous_commit as string };
      } finally {
        store.close();
        await client.end();
      }
    }

    /** Window checks (one counter, two, a batch of two, a refused one), one with credits, a credit change. */
    const everyStatement = (prefix: string) =>
    async (
      store: ReturnType<typeof createPostgresRateLimitStore>,
    ) => {
      const { window, credit } = countersOf(prefix);
      const other = { ...window, name: "w2" };
      await checkOnce(store, [window]);
      await checkOnce(store, [window, other]);
      await store.checkBatch([window, other].map((c) => ({
        counters: [c],
        deadline: Date.now() + 30_000,
      })));
      await checkOnce(store, [{ ...window, name: "w3", limit: 1, cost: 2 }]); // refused
      await checkOnce(store, [window, credit]);
      await checkOnce(store, [window, credit, { ...credit, cost: 0 }]); // a balance twice: the batch
      await store.changeCredits(credit, { add: 1 }, Date.now() + 30_000);
    };

    it("an allowed check of window counters only does not wait for its commit's WAL flush; a refused one, or one with credits, does", async () => {
      const { seen, after } = await commitSettings({}, everyStatement("flush"));
      assert.deepEqual(seen.slice(-7), [
        ["rate_limit_bucket_check", "off"],
        ["rate_limit_bucket_check", "off"],
        ["rate_limit_bucket_batch", "off"],
        ["rate_limit_bucket_check", "on"],
        ["rate_limit_credit_check", "on"], // a credit spend: its commit waits
        ["rate_limit_bucket_batch", "on"],
        ["credit_change_before", "on"],
      ]);
      assert.equal(after, "on");
    });

    it("with durableWindows every commit waits for its WAL flush; a non-boolean is a TypeError", async () => {
      const { seen } = await commitSettings({ durableWindows: true }, everyStatement("durable"));
      assert.deepEqual(seen.slice(-7).map(([, setting]) => setting), Array(7).fill("on"));
      assert.throws(
        () =>
          createPostgresRateLimitStore({
            pool: { query: () => Promise.resolve({ rows: [] }) },
            durableWindows: "yes" as unknown as boolean,
          }),
        { name: "TypeError", message: /durableWindows must be a boolean/ },
      );
    });

    it("a refused check of window counters only locks nothing and writes nothing (no transaction id, no row created)", async () => {
      const client = new pg.Client({ connectionString: DATABASE_URL });
      const other = new pg.Client({ connectionString: DATABASE_URL });
      await Promise.all([client.connect(), other.connect()]);
      // Each statement in a transaction left open while another connection asks for its row's lock.
      const seen: { xid: string | null; lockable: boolean }[] = [];
      let row: unknown[] = [];
      const pool = transactionPool(client, async (text) => {
        if (!/FROM rate_limit_bucket/.test(text)) return;
        const { rows } = await client.query("SELECT pg_current_xact_id_if_assigned()::text AS xid");
        await other.query("BEGIN");
        const locked = await other.query(
          "SELECT 1 FROM rate_limit_buckets WHERE subject = $1 AND name = $2 FOR UPDATE NOWAIT",
          row,
        ).then(() => true, () => false);
        await other.query("ROLLBACK");
        seen.push({ xid: rows[0].xid, lockable: locked });
      });
      const store = createPostgresRateLimitStore({ pool, logger: () => {} });
      try {
        const { subject, window } = countersOf("nolock", 2);
        row = [subject, "w"];
        const checks = [window, window, window, { ...window, cost: 0 }];
        const answers = [];
        for (const counter of checks) answers.push((await checkOnce(store, [counter]))[0]);
        assert.deepEqual(answers.map((a) => [a.allowed, a.remaining]), [
          [true, 1],
          [true, 0],
          [false, 0],
          [true, 0],
        ]);
        const tooBig = { ...window, subject: freshSubject("nolock-big"), limit: 1, cost: 2 };
        row = [tooBig.subject, "w"];
        assert.equal((await checkOnce(store, [tooBig]))[0].allowed, false);
        // The allowed checks took their row's lock (the first created it: not yet visible to
        // another connection, nothing to lock there); the refused ones took none.
        assert.deepEqual(seen.map((s) => [s.xid !== null, s.lockable]), [
          [true, true],
          [true, false],
          [false, true],
          [true, false],
          [false, true],
        ]);
        const { rows } = await other.query(
          "SELECT count(*)::int AS n FROM rate_limit_buckets WHERE subject = $1",
          [tooBig.subject],
        );
        assert.equal(rows[0].n, 0, "a refused check of a new row creates none");
      } finally {
        store.close();
        await Promise.all([client.end(), other.end()]);
      }
    });

    it("rate_limit_bucket_check of one counter consuming in its row's newest sub-bucket reads the row once, unlocked, and counts it by one HOT update (two index scans: no locked read); a new row is inserted at now's sub-bucket, so its first update is HOT too; a refusal writes nothing", async () => {
      await onMigratedSchema("inplace", async ({ admin }) => {
        const subject = freshSubject("inplace");
        // A sub-bucket of a day: the checks below all fall in one.
        const windowMs = 10 * 86_400_000;
        /** One check of cost 1 against a limit of 3, and the table's counts of it. */
        const checked = async () => {
          const { rows: [answer], work } = await bucketWork(
            admin,
            "SELECT allowed, remaining::float8 AS remaining FROM rate_limit_bucket_check(" +
              "$1::bigint, ARRAY[$2::text], ARRAY['w'], ARRAY[$3::bigint], ARRAY[3::bigint], " +
              "ARRAY[1::bigint])",
            [Date.now() + 30_000, subject, windowMs],
          );
          return { ...answer, ...work };
        };
        const first = await checked();
        assert.deepEqual(
          [first.allowed, first.remaining, first.inserted, first.updated, first.hot],
          [true, 2, 1, 1, 1],
          "a new row: inserted at now's sub-bucket, then counted by an update leaving its keys",
        );
        for (const remaining of [1, 0]) {
          assert.deepEqual(await checked(), {
            allowed: true,
            remaining,
            scans: 2,
            inserted: 0,
            updated: 1,
            hot: 1,
          });
        }
        const refused = await checked();
        assert.deepEqual(
          [refused.allowed, refused.remaining, refused.inserted, refused.updated],
          [false, 0, 0, 0],
        );
      });
    });

    it("rate_limit_bucket_batch and rate_limit_credit_check create a missing window row at now's sub-bucket: the update counting it is HOT (its indexed columns as inserted), one row or several", async () => {
      await onMigratedSchema("rowsatnow", async ({ admin }) => {
        // A sub-bucket of a day: each call below falls in one.
        const windowMs = 10 * 86_400_000;
        /** One statement's answers and its rows inserted, updated and updated HOT. */
        const counted = async (text: string, values: unknown[]) => {
          const { rows, work: { inserted, updated, hot } } = await bucketWork(admin, text, values);
          return { allowed: rows.map((row) => row.allowed), inserted, updated, hot };
        };
        const batch = (names: string[]) => {
          const subject = freshSubject("rows-at-now-batch");
          const n = names.length;
          return counted(
            "SELECT allowed FROM rate_limit_bucket_batch($1, $2, $3, $4, $5, $6, $7, $8, $9, " +
              "'{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}')",
            [
              [Date.now() + 30_000],
              [n],
              [0],
              names.map(() => subject),
              names,
              names.map(() => windowMs),
              names.map((_, i) => i + 1),
              names.map(() => 3),
              names.map(() => 1),
            ],
          );
        };
        const credit = (names: string[]) => {
          const subject = freshSubject("rows-at-now-credit");
          return counted(
            "SELECT allowed FROM rate_limit_credit_check($1, $2, $3, $4, $5, $6, ARRAY[$7::text], " +
              "ARRAY['c'], ARRAY[10::bigint], ARRAY[NULL::bigint], ARRAY[0::bigint], " +
              "ARRAY[0::bigint], ARRAY[0], ARRAY[1::bigint])",
            [
              Date.now() + 30_000,
              names.map(() => subject),
              names,
              names.map(() => windowMs),
              names.map(() => 3),
              names.map(() => 1),
              subject,
            ],
          );
        };
        for (const call of [batch, credit]) {
          for (const names of [["w"], ["a", "b"]]) {
            const n = names.length;
            assert.deepEqual(
              await call(names),
              {
                allowed: Array(n + (call === credit ? 1 : 0)).fill(true),
                inserted: n,
                updated: n,
                hot: n,
              },
              `${call === batch ? "rate_limit_bucket_batch" : "rate_limit_credit_check"} of ${n}`,
            );
          }
        }
      });
    });

    it("rate_limit_bucket_check of one counter from 8 connections at once, each check its own statement: exactly the limit allowed, the row holding exactly those units (a count in place matches only the row as its check read it)", async () => {
      const clients = Array.from(
        { length: 8 },
        () => new pg.Client({ connectionString: DATABASE_URL }),
      );
      await Promise.all(clients.map((c) => c.connect()));
      try {
        const subject = freshSubject("inplace-race");
        const windowMs = 10 * 86_400_000;
        const check = (client: pg.Client) =>
          client.query(
            "SELECT allowed FROM rate_limit_bucket_check($1::bigint, ARRAY[$2::text], ARRAY['w'], " +
              "ARRAY[$3::bigint], ARRAY[200::bigint], ARRAY[1::bigint])",
            [Date.now() + 30_000, subject, windowMs],
          );
        await check(clients[0]); // the row made: every check below can count in place
        const allowed = await Promise.all(clients.map(async (client) => {
          let n = 0;
          for (let i = 0; i < 100; i++) if ((await check(client)).rows[0].allowed) n++;
          return n;
        }));
        assert.equal(1 + allowed.reduce((a, b) => a + b), 200);
        const { rows } = await clients[0].query(
          "SELECT (SELECT sum(u) FROM unnest(counts) AS u)::int AS units FROM rate_limit_buckets " +
            "WHERE subject = $1",
          [subject],
        );
        assert.equal(rows[0].units, 200);
      } finally {
        await Promise.all(clients.map((c) => c.end()));
      }
    });

    it("rate_limit_credit_check answers and writes as rate_limit_bucket_batch: refills, all or nothing, costs past a refill", async () => {
      const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
      try {
        const hourAgo = Date.now() - 3_600_000;
        // Per step: window limit and cost, credit cost; two balances (one refilled hourly, first
        // due at once: initialAt an hour ago; one monthly, none due yet).
        const steps = [[3, 1, 2], [3, 1, 5], [3, 1, 6], [3, 1, 0], [3, 1, 1], [3, 2, 1], [
          3,
          0,
          11,
        ]];
        const run = async (fn: "credit" | "batch", subject: string) => {
          const answers: unknown[] = [];
          for (const [limit, cost, spend] of steps) {
            const deadline = Date.now() + 30_000;
            const windows: unknown[][] = [[subject], ["w"], [600_000], [limit], [cost]];
            const balances: unknown[][] = [
              [subject, subject],
              ["hourly", "monthly"],
              [4, 7],
              [hourAgo, null],
            ];
            const refills: unknown[][] = [[10, 0], [3_600_000, 0], [0, 28]];
            const { rows } = fn === "credit"
              ? await pool.query(
                "SELECT allowed, remaining::float8 AS r FROM rate_limit_credit_check($1, $2, $3, " +
                  "$4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
                [deadline, ...windows, ...balances, ...refills, [spend, 1]],
              )
              : await pool.query(
                "SELECT allowed, remaining::float8 AS r FROM rate_limit_bucket_batch($1, $2, $3, " +
                  "$4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)",
                [[deadline], [1], [2], ...windows.slice(0, 3), [1], ...windows.slice(3)]
                  .concat(balances, refills, [[1, 2], [spend, 1]]),
              );
            answers.push(rows.map((row) => [row.allowed, row.r]));
          }
          const { rows } = await pool.query(
            "SELECT name, balance::float8 AS b, as_of::float8 AS a FROM credit_balances " +
              "WHERE subject = $1 ORDER BY name",
            [subject],
          );
          const [window] = await pool.query(
            "SELECT counts FROM rate_limit_buckets WHERE subject = $1",
            [subject],
          ).then((r) => r.rows);
          // (as_of: the refill's boundary for the hourly one; the monthly one's, its creation time)
          const balances = rows.map((r) => [r.name, r.b, r.name === "hourly" ? r.a : null]);
          return { answers, balances, window: window.counts };
        };
        const credit = await run("credit", freshSubject("fn-credit"));
        const batch = await run("batch", freshSubject("fn-batch"));
        assert.deepEqual(credit, batch);
        // The hourly balance refilled to 10 at once, spent 2 then 5; 6 refused (3 left, nothing
        // of the check consumed); the window full after the 3rd unit, refusing the rest.
        assert.deepEqual(credit.answers.slice(0, 3), [
          [[true, 2], [true, 8], [true, 6]],
          [[true, 1], [true, 3], [true, 5]],
          [[true, 1], [false, 3], [true, 5]],
        ]);
        assert.deepEqual(credit.balances.map(([name, balance]) => [name, balance]), [
          ["hourly", 3],
          ["monthly", 4],
        ]);
        assert.deepEqual(credit.answers.slice(4, 6), [
          [[false, 0], [true, 3], [true, 4]],
          [[false, 0], [true, 3], [true, 4]],
        ]);
      } finally {
        await pool.end();
      }
    });

    it("one hot key, 1,000 checks in flight: never past its limit or its credits", async () => {
      const { store, close } = await openStore("postgres");
      try {
        const { window, credit } = countersOf("hot", 100, 60);
        const singles = Array.from(
          { length: 500 },
          () => store.checkBatch(batchOf([window, credit], 1, 30_000)),
        );
        const batches = Array.from(
          { length: 5 },
          () => store.checkBatch(batchOf([window, credit], 100, 30_000)),
        );
        const settled = await Promise.allSettled([...singles, ...batches]);
        const { allowed, answered } = allowedOf(settled);
        assert.equal(answered, 1_000, "every check answered (none by the deadline)");
        assert.equal(allowed, 60);
        assert.deepEqual(await left(store, window, credit), { window: 40, credits: 0 });
      } finally {
        await close();
      }
    });

    it("a role without its privileges on the tables: ready() is a TypeError naming each one missing; a check, a credit change or read fails closed with a TypeError (never passed uncounted by onStoreError)", async () => {
      await onMigratedSchema("grants", async ({ admin, store, limiter }) => {
        // The owner gives its own privileges up (a role of the application's without grants).
        await admin.query("REVOKE ALL ON rate_limit_buckets, credit_balances FROM CURRENT_USER");
        await assert.rejects(
          limiter.ready(),
          (e) =>
            e instanceof TypeError &&
            /lacks SELECT, INSERT, UPDATE, DELETE on rate_limit_buckets and SELECT, INSERT, UPDATE on credit_balances/
              .test(e.message),
        );
        const subject = freshSubject("grants");
        const policies = [{ name: "api", limit: 1, windowMs: 60_000 }];
        const credits = { initial: 0 };
        const calls = [
          () => limiter.check(subject, policies),
          () => limiter.check(subject, policies, { credits }),
          () => limiter.check(subject, [...policies, { ...policies[0], name: "b" }]),
          () => limiter.changeCredits(subject, credits, { add: 1 }),
          () => limiter.readCredits([{ subject, credits }]),
          () => store.deleteExpired(),
        ];
        for (const call of calls) {
          await assert.rejects(
            call(),
            (e) => e instanceof TypeError && /SQLSTATE 42501\b.*permission denied/.test(e.message),
          );
        }
        // All but DELETE granted back: the store needs it on rate_limit_buckets only.
        await admin.query(
          "GRANT SELECT, INSERT, UPDATE ON rate_limit_buckets, credit_balances TO CURRENT_USER",
        );
        await assert.rejects(
          store.ready(),
          (e) =>
            e instanceof TypeError && /lacks DELETE on rate_limit_buckets: GRANT/.test(e.message) &&
            !/credit_balances/.test(e.message),
        );
        await admin.query("GRANT DELETE ON rate_limit_buckets TO CURRENT_USER");
        await limiter.ready();
        assert.equal((await limiter.check(subject, policies)).allowed, true);
      });
    });

    it("a wrong password or a database missing: ready() and a check are TypeErrors naming the state (never passed uncounted by onStoreError)", async () => {
      const url = new URL(DATABASE_URL!);
      const wrongPassword = Object.assign(new URL(url), { password: "not-the-password" });
      const noDatabase = Object.assign(new URL(url), { pathname: "/api_kit_no_such_database" });
      for (const [target, state] of [[wrongPassword, "28P01"], [noDatabase, "3D000"]] as const) {
        const pool = new pg.Pool({ connectionString: target.href, max: 1 });
        const store = createPostgresRateLimitStore({ pool, logger: () => {} });
        const limiter = createRateLimiter({ store, logger: () => {} });
        const refused = (e: unknown) =>
          e instanceof TypeError && new RegExp(`SQLSTATE ${state}\\b`).test(e.message) &&
          !e.message.includes("not-the-password");
        try {
          await assert.rejects(limiter.ready(), refused, state);
          await assert.rejects(
            limiter.check(freshSubject("auth"), [{ name: "api", limit: 1, windowMs: 60_000 }], {
              credits: { initial: 0 },
            }),
            refused,
            state,
          );
        } finally {
          store.close();
          await pool.end();
        }
      }
    });

    it("a read-only connection (a standby, default_transaction_read_only) or one not at read committed (the functions' lock rule): ready() is a TypeError naming the setting", async () => {
      const { schema, drop } = await migratedSchema("settings");
      try {
        for (
          const [setting, message] of [
            ["default_transaction_read_only=on", /read-only/],
            ["default_transaction_isolation=repeatable\\ read", /repeatable read.*read committed/],
            ["default_transaction_isolation=serializable", /serializable.*read committed/],
            ["default_transaction_isolation=read\\ uncommitted", null], // run as read committed
          ] as const
        ) {
          const pool = new pg.Pool({
            connectionString: DATABASE_URL,
            max: 1,
            options: `-c search_path=${schema} -c ${setting}`,
          });
          const store = createPostgresRateLimitStore({ pool, logger: () => {} });
          try {
            const ready = createRateLimiter({ store, logger: () => {} }).ready();
            if (message === null) await ready;
            else {
              await assert.rejects(
                ready,
                (e) => e instanceof TypeError && message.test(e.message),
                setting,
              );
            }
          } finally {
            store.close();
            await pool.end();
          }
        }
      } finally {
        await drop();
      }
    });

    it("a role without EXECUTE on a function of the store's or USAGE on its schema: ready() is a TypeError naming each one missing and the GRANT giving it (never a migration missing); the GRANTs it names make it pass", async () => {
      await onMigratedSchema("fngrants", async ({ schema, admin, store, limiter }) => {
        // A hardened database (EXECUTE revoked from PUBLIC) with a function recreated without its
        // grant (as 0025 recreates credit_change_before).
        await admin.query(
          "REVOKE EXECUTE ON FUNCTION rate_limit_bucket_check FROM PUBLIC, CURRENT_USER",
        );
        const subject = freshSubject("fngrants");
        const policies = [{ name: "api", limit: 1, windowMs: 60_000 }];
        await assert.rejects(
          limiter.check(subject, policies),
          (e) => e instanceof TypeError && /SQLSTATE 42501\b/.test(e.message),
        );
        const fn = `${schema}\\.rate_limit_bucket_check\\(bigint, `;
        await assert.rejects(
          store.ready(),
          (e) =>
            e instanceof TypeError &&
            new RegExp(`lacks EXECUTE on ${fn}.*: GRANT EXECUTE ON FUNCTION ${fn}`).test(
              e.message,
            ) &&
            !/USAGE|misses|rate_limit_buckets|credit_balances|credit_check/.test(e.message),
        );
        // The schema's USAGE given up too: its functions and tables are out of the search path.
        await admin.query(`REVOKE USAGE ON SCHEMA ${schema} FROM CURRENT_USER`);
        const error = await store.ready().then(() => undefined, (e: Error) => e);
        assert.ok(error instanceof TypeError, String(error));
        assert.match(
          error.message,
          new RegExp(
            `lacks USAGE on schema ${schema} and EXECUTE on ${fn}.*: ` +
              `GRANT USAGE ON SCHEMA ${schema} TO \\w+; GRANT EXECUTE ON FUNCTION ${fn}`,
          ),
        );
        assert.doesNotMatch(
          error.message,
          /misses|migrations\/|rate_limit_buckets|credit_balances/,
        );
        // The GRANTs it names, as they are, are all it takes.
        const [, grants] = /^.*?: (GRANT .*;) \(docs\/operations\.md\)$/.exec(error.message)!;
        await admin.query(grants);
        await limiter.ready();
        assert.equal((await limiter.check(subject, policies)).allowed, true);
      });
    });

    it("a function missing (a migration not run): a check is a TypeError (never passed uncounted by onStoreError), and ready() names the migration", async () => {
      await onMigratedSchema("nofn", async ({ admin, limiter }) => {
        await admin.query("DROP FUNCTION rate_limit_credit_check");
        await assert.rejects(
          limiter.check(freshSubject("nofn"), [{ name: "api", limit: 1, windowMs: 60_000 }], {
            credits: { initial: 0 },
          }),
          (e) => e instanceof TypeError && /SQLSTATE 42883\b/.test(e.message),
        );
        await assert.rejects(
          limiter.ready(),
          (e) =>
            e instanceof TypeError &&
            /misses rate_limit_credit_check: apply prisma\/migrations\/0021_rate_limit_credit_check/
              .test(e.message),
        );
      });
    });

    it("a window row it cannot read (a unit NULL or negative, a head out of range): each check function fails closed with a TypeError, and the row is left as it was", async () => {
      const { store, close } = await openStore("postgres");
      const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
      const limiter = createRateLimiter({ store, logger: () => {} });
      const windowMs = 60_000;
      try {
        const { rows: [{ now_ms }] } = await pool.query(
          "SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms",
        );
        const q = Math.floor((now_ms * 10) / windowMs);
        /** The ring with `unit` at the slot of the current sub-bucket, zeros elsewhere. */
        const ring = (unit: string) =>
          `{${Array.from({ length: 11 }, (_, i) => i === q % 11 ? unit : "0").join(",")}}`;
        const rows: [string, string, string][] = [
          ["negative unit", String(q), ring("-1000")],
          ["NULL unit", String(q), ring("NULL")],
          ["negative unit, the clock stepped back", String(q + 1), ring("-1")],
          ["head 2^62", String(2n ** 62n), ring("0")],
          ["head -1", "-1", ring("0")],
          ["head -2^62", String(-(2n ** 62n)), ring("0")],
        ];
        for (const [label, head, counts] of rows) {
          const subject = freshSubject("unreadable");
          await pool.query(
            `INSERT INTO rate_limit_buckets (subject, name, window_ms, head, counts, expires_at)
             VALUES ($1, 'w', $2, $3, $4::bigint[], now() + interval '1 hour')`,
            [subject, windowMs, head, counts],
          );
          const window: WindowCounter = {
            kind: "window",
            subject,
            name: "w",
            limit: 3,
            windowMs,
            cost: 1,
          };
          const other: WindowCounter = { ...window, name: "x" };
          const credit: CreditCounter = { kind: "credit", subject, name: "c", cost: 0, initial: 5 };
          const deadline = Date.now() + 30_000;
          const batches: [string, StoreCheck[]][] = [
            ["rate_limit_bucket_check", [{ counters: [window], deadline }]],
            ["rate_limit_bucket_check", [{ counters: [other, window], deadline }]],
            ["rate_limit_credit_check", [{ counters: [window, credit], deadline }]],
            ["rate_limit_bucket_batch", [{ counters: [window], deadline }, {
              counters: [window],
              deadline,
            }]],
          ];
          for (const [fn, checks] of batches) {
            await assert.rejects(
              store.checkBatch(checks),
              (e) =>
                e instanceof TypeError && /SQLSTATE RL001\b.*rate_limit_buckets/.test(e.message),
              `${label}: ${fn}`,
            );
          }
          await assert.rejects(
            limiter.check(subject, [{ name: "w", limit: 3, windowMs }]),
            TypeError,
            `${label}: through the limiter`,
          );
          const { rows: [kept] } = await pool.query(
            "SELECT head::text AS head, counts::text AS counts FROM rate_limit_buckets WHERE subject = $1",
            [subject],
          );
          assert.deepEqual(kept, { head, counts }, label);
        }
      } finally {
        await Promise.all([close(), pool.end()]);
      }
    });

    it("a batch beside the sweep: an expired row deleteExpired removes after the batch's insert found it, before its lock, is created again; every check answered, no row left unreadable (0035)", async () => {
      const { store, close } = await openStore("postgres");
      const holder = new pg.Client({ connectionString: DATABASE_URL });
      const watcher = new pg.Client({ connectionString: DATABASE_URL });
      await Promise.all([holder.connect(), watcher.connect()]);
      const windowMs = 60_000;
      // Three rows in the batch's lock order: the first held elsewhere, the second expired (the
      // sweep's), the third counted before (its ring must stay where it is).
      const base = freshSubject("swept");
      const [first, swept, third] = ["a", "b", "c"].map((x) => `${base}-${x}`);
      const window = (subject: string, limit: number): WindowCounter => ({
        kind: "window",
        subject,
        name: "w",
        limit,
        windowMs,
        cost: 1,
      });
      try {
        await holder.query(
          `INSERT INTO rate_limit_buckets (subject, name, window_ms, head, counts, expires_at)
           VALUES ($1, 'w', $4, 1, array_fill(0::bigint, ARRAY[11]), now() + interval '1 hour'),
             ($2, 'w', $4, 1, array_fill(0::bigint, ARRAY[11]), now() - interval '1 day'),
             ($3, 'w', $4, 1, array_fill(0::bigint, ARRAY[11]), now() + interval '1 hour')`,
          [first, swept, third, windowMs],
        );
        const deadline = Date.now() + 30_000;
        await store.checkBatch([{ counters: [window(third, 100)], deadline }]);
        await holder.query("BEGIN");
        await holder.query("SELECT 1 FROM rate_limit_buckets WHERE subject = $1 FOR UPDATE", [
          first,
        ]);
        const batch = store.checkBatch(
          [first, swept, third].map((subject) => ({
            counters: [window(subject, 100)],
            deadline,
          })),
        );
        // The batch inserted (finding every row) and waits on the first row's lock. Watched from
        // a connection of its own: inside the holder's transaction pg_stat_activity is one snapshot.
        const waiting = async () => {
          const { rows } = await watcher.query(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' " +
              "AND query LIKE '%rate_limit_bucket_batch%'",
          );
          return rows[0].n > 0;
        };
        for (let i = 0; !(await waiting()); i++) {
          assert.ok(i < 200, "the batch never waited on the held row");
          await sleep(25);
        }
        // The sweep's statement, on that row alone, committed before the batch locks it.
        await holder.query(
          "DELETE FROM rate_limit_buckets WHERE subject = $1 AND expires_at < now()",
          [swept],
        );
        await holder.query("COMMIT");
        const { results } = await batch;
        assert.deepEqual(
          results.map((r) => r?.map(({ allowed, remaining }) => ({ allowed, remaining }))),
          [[{ allowed: true, remaining: 99 }], [{ allowed: true, remaining: 99 }], [{
            allowed: true,
            remaining: 98,
          }]],
        );
        const { rows } = await holder.query(
          "SELECT subject, (SELECT sum(v)::int FROM unnest(counts) v) AS units " +
            "FROM rate_limit_buckets WHERE subject = ANY($1::text[]) ORDER BY subject",
          [[first, swept, third]],
        );
        assert.deepEqual(rows, [
          { subject: first, units: 1 },
          { subject: swept, units: 1 },
          { subject: third, units: 2 },
        ]);
      } finally {
        await holder.query("ROLLBACK").catch(() => {});
        await holder.query("DELETE FROM rate_limit_buckets WHERE subject = ANY($1::text[])", [[
          first,
          swept,
          third,
        ]]);
        await Promise.all([close(), holder.end(), watcher.end()]);
      }
    });

    it("ready() on a schema migrated up to 0022: starts, and logs once through the limiter's logger that 0023, 0024, 0025, 0026, 0027, 0031, 0033, 0034 and 0035 are missing; then only 0024 to 0027, 0031 and 0033; then only 0025 to 0027, 0031 and 0033 (a balance kept across a rule change refused naming 0025); then only 0026, 0027 and 0031; then only 0027 (a credit change answers no balance before) and 0031; then only 0031 (a corrupt window row counted as none); then only 0033 (a locked read per allowed check of one counter); then only 0034 (a new counter's row written twice by a batch or a credit check); then only 0035 (a batch's row swept as it locks it); then nothing", async () => {
      const schema = `ready_${crypto.randomUUID().replaceAll("-", "")}`;
      const admin = new pg.Client({ connectionString: DATABASE_URL });
      await admin.connect();
      const apply = (migration: string) => applyMigration(admin, migration);
      const pool = new pg.Pool({
        connectionString: DATABASE_URL,
        max: 1,
        options: `-c search_path=${schema}`,
      });
      try {
        await admin.query(`CREATE SCHEMA ${schema}; SET search_path TO ${schema}`);
        for (const migration of await migrationNames()) {
          if (migration < "0023") await apply(migration);
        }
        /** The lines one limiter's `ready()` (called twice) logs, and its store's own logger. */
        const linesOfReady = async () => {
          const lines: string[] = [];
          const own: string[] = [];
          const store = createPostgresRateLimitStore({ pool, logger: (l) => void own.push(l) });
          const limiter = createRateLimiter({ store, logger: (l) => void lines.push(l) });
          lines.length = 0; // the limiter's start-up line
          await limiter.ready();
          await limiter.ready();
          assert.deepEqual(own, [], "the store's own logger is for the pool's errors");
          // The store checks out as before: a check is answered.
          const { allowed } = await limiter.check(freshSubject("ready"), [{
            name: "api",
            limit: 1,
            windowMs: 60_000,
          }]);
          assert.equal(allowed, true);
          store.close();
          return lines;
        };
        const up22 = await linesOfReady();
        assert.equal(up22.length, 1, up22.join("\n"));
        assert.match(up22[0], /^rate-limits: the postgres store's functions lack /);
        assert.match(
          up22[0],
          /prisma\/migrations\/0023_function_search_path_schema\/migration\.sql/,
        );
        assert.match(up22[0], /prisma\/migrations\/0024_function_keyed_plans\/migration\.sql/);
        assert.match(up22[0], /credit_period/, "0023 covers every function of the store");
        assert.match(
          up22[0],
          /prisma\/migrations\/0031_rate_limit_unreadable_rows\/migration\.sql/,
        );
        assert.match(
          up22[0],
          /prisma\/migrations\/0034_rate_limit_rows_created_at_now\/migration\.sql/,
        );
        assert.match(
          up22[0],
          /prisma\/migrations\/0035_rate_limit_batch_rows_swept\/migration\.sql/,
        );
        // Called on the store itself: its own logger, once.
        const own: string[] = [];
        const direct = createPostgresRateLimitStore({ pool, logger: (l) => void own.push(l) });
        await direct.ready();
        await direct.ready();
        direct.close();
        assert.deepEqual(own, up22);
        await apply("0023_function_search_path_schema");
        const up23 = await linesOfReady();
        assert.equal(up23.length, 1, up23.join("\n"));
        assert.doesNotMatch(up23[0], /0023/);
        assert.match(up23[0], /prisma\/migrations\/0024_function_keyed_plans\/migration\.sql/);
        assert.doesNotMatch(up23[0], /credit_period/, "0024 leaves credit_period as it is");
        await apply("0024_function_keyed_plans");
        const up24 = await linesOfReady();
        assert.equal(up24.length, 1, up24.join("\n"));
        assert.doesNotMatch(up24[0], /0024/);
        assert.match(up24[0], /prisma\/migrations\/0025_credit_change_anchor\/migration\.sql/);
        // Without it a balance kept across a rule change fails naming it, never another way.
        const store = createPostgresRateLimitStore({ pool, logger: () => {} });
        const credit: CreditCounter = {
          kind: "credit",
          subject: freshSubject("anchor"),
          name: "c",
          cost: 0,
          initial: 5,
        };
        await assert.rejects(
          store.changeCredits(credit, { anchor: true }, Date.now() + 30_000),
          (error) => error instanceof TypeError && /0025_credit_change_anchor/.test(error.message),
        );
        assert.equal(
          (await store.changeCredits(credit, { add: 1 }, Date.now() + 30_000))?.remaining,
          6,
        );
        assert.match(up24[0], /0026_credit_change_anchor_clock/);
        await apply("0025_credit_change_anchor");
        const up25 = await linesOfReady();
        assert.equal(up25.length, 1, up25.join("\n"));
        assert.doesNotMatch(up25[0], /0025/);
        assert.match(
          up25[0],
          /prisma\/migrations\/0026_credit_change_anchor_clock\/migration\.sql/,
        );
        assert.equal(
          (await store.changeCredits(credit, { anchor: true }, Date.now() + 30_000))?.remaining,
          6,
        );
        await apply("0026_credit_change_anchor_clock");
        const up26 = await linesOfReady();
        assert.equal(up26.length, 1, up26.join("\n"));
        assert.doesNotMatch(up26[0], /0026/);
        assert.match(
          up26[0],
          /prisma\/migrations\/0027_credit_change_balance_before\/migration\.sql/,
        );
        // Without it a credit change is applied and answered, without the balance before.
        const kept = await store.changeCredits(credit, { anchor: true }, Date.now() + 30_000);
        assert.deepEqual(kept, { allowed: true, remaining: 6, resetMs: -1 });
        await apply("0027_credit_change_balance_before");
        const up27 = await linesOfReady();
        assert.equal(up27.length, 1, up27.join("\n"));
        assert.doesNotMatch(up27[0], /0027/);
        assert.match(
          up27[0],
          /lack 0031_rate_limit_unreadable_rows \(rate_limit_bucket_batch, rate_limit_bucket_check, rate_limit_credit_check: a window row's unit NULL or negative .*prisma\/migrations\/0031_rate_limit_unreadable_rows\/migration\.sql/,
        );
        await apply("0031_rate_limit_unreadable_rows");
        const up31 = await linesOfReady();
        assert.equal(up31.length, 1, up31.join("\n"));
        assert.match(
          up31[0],
          /lack 0033_rate_limit_check_in_place \(rate_limit_bucket_check: an allowed check of one counter reads its row, locks it and reads it again .*prisma\/migrations\/0033_rate_limit_check_in_place\/migration\.sql/,
        );
        await apply("0033_rate_limit_check_in_place");
        const up33 = await linesOfReady();
        assert.equal(up33.length, 1, up33.join("\n"));
        assert.match(
          up33[0],
          /lack 0034_rate_limit_rows_created_at_now \(rate_limit_bucket_batch, rate_limit_credit_check: a new counter's row is written twice .*prisma\/migrations\/0034_rate_limit_rows_created_at_now\/migration\.sql/,
        );
        await apply("0034_rate_limit_rows_created_at_now");
        const up34 = await linesOfReady();
        assert.equal(up34.length, 1, up34.join("\n"));
        assert.match(
          up34[0],
          /lack 0035_rate_limit_batch_rows_swept \(rate_limit_bucket_batch: a batch beside deleteExpired .*prisma\/migrations\/0035_rate_limit_batch_rows_swept\/migration\.sql/,
        );
        await apply("0035_rate_limit_batch_rows_swept");
        assert.deepEqual(await linesOfReady(), []);
        const set = await store.changeCredits(credit, { set: 2 }, Date.now() + 30_000);
        assert.deepEqual(set, { allowed: true, remaining: 2, resetMs: -1, before: 6 });
        store.close();
      } finally {
        await pool.end();
        try {
          await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        } finally {
          await admin.end();
        }
      }
    });

    it("credit_change_before anchoring a balance settles it and anchors it on one reading of the clock, however long its writes take: the refill boundary after that moment refills it", async () => {
      const schema = `anchor_${crypto.randomUUID().replaceAll("-", "")}`;
      const admin = new pg.Client({ connectionString: DATABASE_URL });
      await admin.connect();
      try {
        await admin.query(`CREATE SCHEMA ${schema}; SET search_path TO ${schema}`);
        for (const migration of await migrationNames()) await applyMigration(admin, migration);
        // Each write of a balance takes 50 ms: past a 40 ms refill period, a clock read after it
        // reads a later refill period than one before it.
        await admin.query(`CREATE FUNCTION slow_write() RETURNS trigger LANGUAGE plpgsql AS
          $$ BEGIN PERFORM pg_sleep(0.05); RETURN NEW; END $$`);
        await admin.query(`CREATE TRIGGER slow_write BEFORE UPDATE ON credit_balances
          FOR EACH ROW EXECUTE FUNCTION slow_write()`);
        const subject = freshSubject("anchor-clock");
        // Balance 3 (new), refilled to 100 every 40 ms; kept ({ anchor: true }: set NULL, add 0).
        const { rows: [changed] } = await admin.query(
          `SELECT applied, remaining::float8 AS remaining, reset_ms::float8 AS reset_ms,
             now_ms::float8 AS now_ms
           FROM credit_change_before($1, $2, 'c', 3, NULL, 100, 40, 0, NULL, 0, true)`,
          [Date.now() + 30_000, subject],
        );
        assert.equal(changed.applied, true);
        const { rows: [kept] } = await admin.query(
          "SELECT as_of::float8 AS as_of FROM credit_balances WHERE subject = $1 AND name = 'c'",
          [subject],
        );
        assert.equal(kept.as_of, changed.now_ms, "anchored at the moment it settled on");
        assert.equal((changed.now_ms + changed.reset_ms) % 40, 0, "the next boundary after it");
        // At least one boundary passed since (the anchoring write took 50 ms): it refills.
        const { rows: [read] } = await admin.query(
          `SELECT balance::float8 AS balance FROM credit_read(ARRAY[$1], ARRAY['c'], ARRAY[100],
             ARRAY[40], ARRAY[0])`,
          [subject],
        );
        assert.equal(read.balance, 100);
      } finally {
        try {
          await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        } finally {
          await admin.end();
        }
      }
    });
  });
}
