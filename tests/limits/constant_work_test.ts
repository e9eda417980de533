/**
 * Constant work per check on the remote stores (docs/rate-limits.md, "Constant
 * cost"), asserted by structure, not by timing: what one check makes the
 * server do is the same after 1, 1,000 and 10,000 units, with a limit of 10
 * or 10^9, and with 10 or 10,000 more active subjects; each (subject, policy)
 * holds one counter (and a balance one entry) whose size does not grow.
 *
 * - Redis (a redis-server of the test's own: nothing else runs commands on
 *   it): the commands the server ran per check (`INFO commandstats`, which
 *   counts the commands a script runs too), the round trips sent, the keys of
 *   a subject and their `MEMORY USAGE`.
 * - PostgreSQL: the statements sent per check, and inside one transaction per
 *   check the rows it read and wrote per table (`pg_stat_xact_user_tables`:
 *   scans, rows fetched, inserted, updated, deleted), the rows of a subject
 *   and their `pg_column_size`.
 *
 * Units are consumed as rounds of 100 checks of cost 1 (a round is one batch:
 * one round trip), so 10,000 units are 10,000 hits over about 100 distinct
 * ms: a per-hit or per-ms log would show.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import pg from "pg";
import { createPostgresRateLimitStore } from "../../rate_limits/postgres/mod.ts";
import type {
  CounterResult,
  CreditCounter,
  RateLimitCounter,
  RateLimitStore,
} from "../../rate_limits/store.ts";
import {
  checkOnce,
  connectRedis,
  DATABASE_URL,
  freshSubject,
  migratedSchema,
  openStore,
  readyStores,
  type StoreKind,
} from "./_services.ts";
import { type OwnRedis, startOwnRedis } from "./_own_redis.ts";

/** What one check made the server do: counts that must not grow with load. */
type Work = Record<string, number | Record<string, number>>;

/** A store on a real service, with what the test reads of the server. */
interface Probe {
  store: RateLimitStore;
  /**
   * What one check of `counters` made the server do, with its answers' `allowed`;
   * with `checks`, what a batch of that many checks of them did.
   */
  work(
    counters: readonly RateLimitCounter[],
    checks?: number,
  ): Promise<{ work: Work; allowed: boolean[] }>;
  /** What `run` (calls of `store`) made the server do. */
  workOf(run: () => Promise<unknown>): Promise<Work>;
  /** The size in bytes of each entry the server holds for `subject` (counters and balances), in a fixed order. */
  footprint(subject: string): Promise<number[]>;
  /** Entries the server holds in all (keys, or rows of counters and balances). */
  entries(): Promise<number>;
  close(): Promise<void>;
}

/** A check's counters: one policy (cost `cost`), and with `credits` a balance (cost 1) too. */
function countersOf(
  subject: string,
  limit: number,
  credits: boolean,
  cost = 1,
): RateLimitCounter[] {
  const counters: RateLimitCounter[] = [
    { kind: "window", subject, name: "api", limit, windowMs: 600_000, cost },
  ];
  if (credits) counters.push({ kind: "credit", subject, name: "c", cost: 1, initial: 1e12 });
  return counters;
}

/** Consumes `units` checks of `counters` (cost 1 each) in rounds of 100 checks, one batch each. */
async function consume(
  store: RateLimitStore,
  counters: readonly RateLimitCounter[],
  units: number,
): Promise<void> {
  for (let left = units; left > 0; left -= 100) {
    const deadline = Date.now() + 30_000;
    const batch = Array.from({ length: Math.min(100, left) }, () => ({ counters, deadline }));
    const { results } = await store.checkBatch(batch);
    assert.ok(results.every((r) => r !== null), "every check reached the store in time");
  }
}

/**
 * `checks` checks of `counters` in one batch (one check: as `checkOnce`, the
 * store's statement of one check), the answers of the last.
 */
async function checkAll(
  store: RateLimitStore,
  counters: readonly RateLimitCounter[],
  checks: number,
): Promise<readonly CounterResult[]> {
  if (checks === 1) return await checkOnce(store, counters);
  const deadline = Date.now() + 30_000;
  const { results } = await store.checkBatch(
    Array.from({ length: checks }, () => ({ counters, deadline })),
  );
  return results.at(-1) ?? assert.fail("the batch's deadline passed");
}

/** What one check (or a batch of `checks`) of `counters` made `probe`'s server do, with its answers' `allowed`. */
async function checkWork(probe: Probe, counters: readonly RateLimitCounter[], checks = 1) {
  let answers: readonly CounterResult[] = [];
  const work = await probe.workOf(async () => {
    answers = await checkAll(probe.store, counters, checks);
  });
  return { work, allowed: answers.map((a) => a.allowed) };
}

/** Makes `n` subjects active: one check of `counters(subject)` each, 500 checks a batch. */
async function activate(
  store: RateLimitStore,
  n: number,
  counters: (subject: string) => RateLimitCounter[],
): Promise<void> {
  for (let done = 0; done < n; done += 500) {
    const deadline = Date.now() + 30_000;
    const batch = Array.from(
      { length: Math.min(500, n - done) },
      () => ({ counters: counters(freshSubject("other")), deadline }),
    );
    const { results } = await store.checkBatch(batch);
    assert.ok(results.every((r) => r !== null), "every check reached the store in time");
  }
}

/** `after - before` of two counts, the keys whose count did not change left out. */
function diff(before: Record<string, number>, after: Record<string, number>) {
  const out: Record<string, number> = {};
  for (const [key, n] of Object.entries(after)) {
    if (n !== (before[key] ?? 0)) out[key] = n - (before[key] ?? 0);
  }
  return out;
}

/** Calls per command in an `INFO commandstats` reply (a script's own commands included). */
function commandCalls(info: string): Record<string, number> {
  const calls: Record<string, number> = {};
  for (const [, command, n] of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    calls[command] = Number(n);
  }
  return calls;
}

/** The Redis store on an own redis-server, the commands it makes the server run counted there. */
async function redisProbe(own: OwnRedis): Promise<Probe> {
  const real = await openStore("redis", own.url, 1);
  const admin = await connectRedis(own.url);
  const stats = async () => commandCalls(await admin.info("commandstats"));
  const probe: Probe = {
    store: real.store,
    work: (counters, checks) => checkWork(probe, counters, checks),
    async workOf(run) {
      const [calls, sent] = [await stats(), real.sent()];
      await run();
      const roundTrips = real.sent() - sent;
      const commands = diff(calls, await stats());
      delete commands.info; // the test's own INFO
      return { roundTrips, commands };
    },
    async footprint(subject) {
      // Ordered by what follows the subject (the counter's or balance's name).
      const keys = (await admin.keys(`*${subject}*`)).sort((a, b) =>
        a.split(subject).at(-1)!.localeCompare(b.split(subject).at(-1)!)
      );
      return await Promise.all(
        keys.map(async (key) => Number(await admin.sendCommand(["MEMORY", "USAGE", key]))),
      );
    },
    entries: async () => await admin.dbSize(),
    async close() {
      admin.destroy();
      await real.close();
    },
  };
  return probe;
}

/** Rows read and written per table of the current schema inside this transaction so far (`pg_stat_xact_user_tables`). */
async function tableWork(client: pg.Client): Promise<Record<string, number>> {
  const { rows } = await client.query(
    `SELECT relname::text AS table, seq_scan, seq_tup_read, coalesce(idx_scan, 0) AS idx_scan,
       coalesce(idx_tup_fetch, 0) AS idx_tup_fetch, n_tup_ins, n_tup_upd, n_tup_del
     FROM pg_stat_xact_user_tables WHERE schemaname = current_schema()`,
  );
  const out: Record<string, number> = {};
  for (const { table, ...counts } of rows) {
    // Each a count of scans or rows (HOT updates left out: whether an update is HOT depends on
    // the free room of the row's page, not on the check).
    for (const [what, n] of Object.entries(counts)) out[`${table}.${what}`] = Number(n);
  }
  return out;
}

/**
 * A schema of its own holding what every migration of prisma/migrations
 * creates (`migratedSchema`), its tables analyzed while empty and never again (autovacuum off
 * for them): the statistics that mislead the planner most, those of a table
 * whose every row was deleted (`deleteExpired()` after a quiet hour) when it
 * was analyzed. They say the table holds no row on however many pages, so the
 * planner believes it holds one row whatever it grows to. Dropped by `drop()`.
 */
async function analyzedSchema(): Promise<{ schema: string; drop(): Promise<void> }> {
  const { schema, admin, drop } = await migratedSchema("constant_work");
  try {
    await admin.query(
      `INSERT INTO rate_limit_buckets (subject, name, window_ms, head, counts, expires_at)
         SELECT 'gone' || i, 'api', 1, 0, array_fill(0::BIGINT, ARRAY[11]), now()
         FROM generate_series(1, 1000) i;
       INSERT INTO credit_balances (subject, name, balance, as_of)
         SELECT 'gone' || i, 'c', 0, 0 FROM generate_series(1, 1000) i`,
    );
    for (const table of ["rate_limit_buckets", "credit_balances"]) {
      await admin.query(`ALTER TABLE ${table} SET (autovacuum_enabled = false)`);
      await admin.query(`DELETE FROM ${table}`);
      await admin.query(`ANALYZE ${table}`);
    }
  } catch (error) {
    await drop();
    throw error;
  }
  return { schema, drop };
}

/**
 * The PostgreSQL store on one connection, on a schema of its own
 * (`analyzedSchema`: its tables analyzed empty), each measured check in a
 * transaction of its own. The connection plans as any other (no planner
 * setting of its own), from those statistics: what the SQL reads must be
 * found by its keys whatever the statistics say. (Left to statistics that say
 * a table holds a few rows, the planner reads it whole, a sequential scan or
 * a whole index joined to a batch's rows, and PL/pgSQL keeps that plan for
 * the session: a check read 42 rows among 10 more subjects and 30,015 among
 * 10,000 until migration 0024.)
 */
async function postgresProbe(): Promise<Probe> {
  const { schema, drop } = await analyzedSchema();
  const client = new pg.Client({
    connectionString: DATABASE_URL,
    options: `-c search_path=${schema}`,
  });
  await client.connect().catch(async (error) => {
    await drop();
    throw error;
  });
  let sent = 0;
  const counted = {
    query: (text: Parameters<pg.Client["query"]>[0], values?: unknown[]) => (
      sent++, client.query(text, values)
    ),
  } as Parameters<typeof createPostgresRateLimitStore>[0]["pool"];
  const store = createPostgresRateLimitStore({ pool: counted, logger: () => {} });
  await checkOnce(store, countersOf(freshSubject("warm"), 10, true)); // the clock read, prepared statements
  const probe: Probe = {
    store,
    work: (counters, checks) => checkWork(probe, counters, checks),
    async workOf(run) {
      await client.query("BEGIN");
      try {
        const [tables, before] = [await tableWork(client), sent];
        await run();
        const statements = sent - before;
        const rows = diff(tables, await tableWork(client));
        return { statements, rows };
      } finally {
        await client.query("COMMIT");
      }
    },
    async footprint(subject) {
      const { rows } = await client.query(
        `SELECT pg_column_size(t.*) AS bytes FROM rate_limit_buckets t WHERE t.subject = $1
         UNION ALL SELECT pg_column_size(b.*) FROM credit_balances b WHERE b.subject = $1`,
        [subject],
      );
      return rows.map((r) => Number(r.bytes));
    },
    async entries() {
      const { rows } = await client.query(
        `SELECT (SELECT count(*) FROM rate_limit_buckets) + (SELECT count(*) FROM credit_balances)
           AS n`,
      );
      return Number(rows[0].n);
    },
    async close() {
      await client.end();
      await drop();
    },
  };
  return probe;
}

/** How far apart the sizes of one entry may be: Redis writes numbers as digits (1 vs 10000). */
const SLACK_BYTES: Record<StoreKind, number> = { redis: 16, postgres: 0 };

/** Whether each size of `a` is within `slack` bytes of the same entry's size in `b`. */
function sameSizes(a: number[], b: number[], slack: number, what: string): void {
  assert.equal(a.length, b.length, `${what}: as many entries (${a} vs ${b})`);
  a.forEach((n, i) =>
    assert.ok(Math.abs(n - b[i]) <= slack, `${what}: ${n} vs ${b[i]} bytes (slack ${slack})`)
  );
}

for (const kind of await readyStores("constant work per check")) {
  describe(`${kind} store: constant work per check`, () => {
    let own: OwnRedis | undefined;
    let probe: Probe;
    before(async () => {
      if (kind === "redis") own = await startOwnRedis();
      probe = kind === "redis" ? await redisProbe(own!) : await postgresProbe();
    });
    after(async () => {
      await probe?.close();
      await own?.stop();
    });

    for (const credits of [false, true]) {
      const shape = credits ? "a policy and credits" : "one policy";
      /** One entry per counter: the window counter, and the balance. */
      const perSubject = credits ? 2 : 1;

      it(`${shape}: the same work per check after 1, 1,000 and 10,000 units, limit 10 or 10^9; one fixed-size entry per counter`, async () => {
        const big = freshSubject("big");
        await consume(probe.store, countersOf(big, 1e9, credits), 1);
        const sizeAtOne = await probe.footprint(big);
        assert.equal(sizeAtOne.length, perSubject, "one entry per (subject, policy) or balance");
        // One check, and a batch of two (another statement on PostgreSQL), at each stage.
        const stage = async () => [
          await probe.work(countersOf(big, 1e9, credits)),
          await probe.work(countersOf(big, 1e9, credits), 2),
        ];
        const [atOne, batchAtOne] = await stage();
        assert.deepEqual(atOne.allowed, countersOf(big, 1e9, credits).map(() => true));
        await consume(probe.store, countersOf(big, 1e9, credits), 995);
        const [atThousand, batchAtThousand] = await stage();
        await consume(probe.store, countersOf(big, 1e9, credits), 8_997);
        const [atTenThousand, batchAtTenThousand] = await stage();
        const sizeAtTenThousand = await probe.footprint(big);
        console.log(
          `${kind}, ${shape}: a check ${JSON.stringify(atOne.work)}; a batch of two ` +
            `${JSON.stringify(batchAtOne.work)}; entries ${sizeAtOne} → ` +
            `${sizeAtTenThousand} bytes after 1 → 10,000 units`,
        );
        assert.deepEqual(atThousand, atOne, "after 1,000 units as after 1");
        assert.deepEqual(atTenThousand, atOne, "after 10,000 units as after 1");
        assert.deepEqual(batchAtThousand, batchAtOne, "a batch after 1,000 units as after 1");
        assert.deepEqual(batchAtTenThousand, batchAtOne, "a batch after 10,000 units as after 1");
        sameSizes(sizeAtTenThousand, sizeAtOne, SLACK_BYTES[kind], "after 10,000 units vs 1");

        // A limit of 10: the same work and size as a limit of 10^9.
        const small = freshSubject("small");
        await consume(probe.store, countersOf(small, 10, credits), 1);
        assert.deepEqual(await probe.work(countersOf(small, 10, credits)), atOne, "limit 10");
        sameSizes(await probe.footprint(small), sizeAtOne, SLACK_BYTES[kind], "limit 10 vs 10^9");

        // Refused: at limit 10 after 10,000 tries, and at 10^9 after 10,000 units (a cost past
        // what is left), the same work (less than an allowed check's: nothing written).
        await consume(probe.store, countersOf(small, 10, credits), 10_000);
        const refusedSmall = await probe.work(countersOf(small, 10, credits));
        const refusedBig = await probe.work(countersOf(big, 1e9, credits, 1e9));
        assert.equal(refusedSmall.allowed[0], false);
        assert.deepEqual(refusedBig, refusedSmall, "refused at 10^9 as at 10");
        const writes = /"(set|hset)"|n_tup_(ins|upd|del)/.exec(JSON.stringify(refusedSmall.work));
        assert.equal(
          writes,
          null,
          `a refusal writes nothing (${JSON.stringify(refusedSmall.work)})`,
        );
        assert.equal((await probe.footprint(small)).length, perSubject);
      });

      it(`${shape}: the same work per check with 10 or 10,000 more active subjects`, async () => {
        const measure = async () => {
          const subject = freshSubject("among");
          await consume(probe.store, countersOf(subject, 1e9, credits), 1);
          const checks = [
            (await probe.work(countersOf(subject, 1e9, credits))).work,
            (await probe.work(countersOf(subject, 1e9, credits), 2)).work,
          ];
          if (!credits) return checks;
          // A balance read (one held, one not) and changed: one row each too.
          const [, balance] = countersOf(subject, 1e9, true) as [unknown, CreditCounter];
          const { store } = probe;
          const read = async () => {
            const read = await store.readCredits!([balance, { ...balance, subject: "none" }]);
            assert.deepEqual(read.map((r) => r === null), [false, true]);
          };
          const change = async () => {
            assert.ok(await store.changeCredits!(balance, { add: 1 }, Date.now() + 30_000));
          };
          await read(); // each script loaded (Redis: EVALSHA from then on)
          await change();
          return [...checks, await probe.workOf(read), await probe.workOf(change)];
        };
        const start = await probe.entries();
        await activate(probe.store, 10, (s) => countersOf(s, 1e9, credits));
        const amongTen = await measure();
        await activate(probe.store, 9_990, (s) => countersOf(s, 1e9, credits));
        const amongTenThousand = await measure();
        const added = await probe.entries() - start;
        console.log(
          `${kind}, ${shape}: ${added} entries added; a check, a batch of two: ` +
            JSON.stringify(amongTen),
        );
        // One entry per counter of each subject: 10,000 others and the two measured.
        assert.equal(added, 10_002 * perSubject);
        assert.deepEqual(amongTenThousand, amongTen, "among 10,000 more subjects as among 10");
      });
    }
  });
}
