/** Each real store against the reference model: on the server's real clock, and on a pinned one. */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import pg from "pg";
import {
  commands,
  countersOf,
  creditCommands,
  creditOf,
  ReferenceCombined,
  ReferenceStore,
} from "../rate_limits/_model.ts";
import {
  checkOnce,
  connectRedis,
  DATABASE_URL,
  freshSubject,
  openStore,
  pinnedClient,
  readyStores,
  REDIS_URL,
} from "./_services.ts";
import { createRedisRateLimitStore, type RedisScriptClient } from "../../rate_limits/redis/mod.ts";
import { createPostgresRateLimitStore } from "../../rate_limits/postgres/mod.ts";
import type { CounterResult, CreditChangeResult, RateLimitStore } from "../../rate_limits/store.ts";

// Windows scaled ×1,000 (400 s and more): nothing expires during a run, so the
// reference at one instant predicts `allowed` and `remaining` exactly.
const SCALE = 1_000;

for (const kind of await readyStores("rate-limit model")) {
  describe(`${kind} store against the reference`, () => {
    it("agrees on allowed and remaining (cost, cost 0, all or nothing); resetMs stays in its window", async () => {
      const { store, close } = await openStore(kind);
      try {
        await fc.assert(
          fc.asyncProperty(commands, async (script) => {
            const reference = new ReferenceStore();
            const run = freshSubject("model");
            for (const command of script) {
              const counters = countersOf(
                { ...command, subject: `${run}:${command.subject}` },
                SCALE,
              );
              const expected = reference.check(counters, 0);
              const actual = await checkOnce(store, counters);
              assert.deepEqual(
                actual.map((r) => [r.allowed, r.remaining]),
                expected.map((r) => [r.allowed, r.remaining]),
              );
              actual.forEach((r, i) => {
                const most = counters[i].windowMs * 1.1 + 1; // the oldest sub-bucket leaves by then
                assert.ok(r.resetMs >= 0 && r.resetMs <= most, String(r.resetMs));
              });
            }
          }),
          { numRuns: 25 },
        );
      } finally {
        await close();
      }
    });

    it("frees units when they leave the window (real time)", async () => {
      const { store, close } = await openStore(kind);
      try {
        const counter = {
          kind: "window" as const,
          subject: freshSubject("expiry"),
          name: "short",
          limit: 2,
          windowMs: 300,
          cost: 1,
        };
        assert.equal((await checkOnce(store, [counter]))[0].allowed, true);
        assert.equal((await checkOnce(store, [counter]))[0].allowed, true);
        const denied = (await checkOnce(store, [counter]))[0];
        assert.equal(denied.allowed, false);
        assert.ok(denied.resetMs > 0 && denied.resetMs <= 331, String(denied.resetMs));
        // Every unit leaves within windowMs × 1.2 of its acceptance (its sub-bucket's end + B + 1).
        await new Promise((resolve) => setTimeout(resolve, 400));
        assert.deepEqual((await checkOnce(store, [counter]))[0].remaining, 1);
      } finally {
        await close();
      }
    });
  });
}

/**
 * Random sequences on a store whose clock the test sets (`setClock`) agree
 * exactly with the reference: allowed, remaining and resetMs, as time moves.
 * With `batched`, each run of checks at one moment (after the first,
 * `advanceMs` 0) is sent as one batch, so a batch holds the same counters
 * again and again (a hot key's checks, sent together), the checks applied in
 * order; else one check per batch.
 */
async function agreesOnPinnedClock(
  open: () => RateLimitStore & { close(): void },
  setClock: (ms: number) => unknown,
  numRuns: number,
  batched = false,
): Promise<void> {
  await fc.assert(
    fc.asyncProperty(commands, fc.integer({ min: 0, max: 10_000 }), async (script, start) => {
      let now = 1_750_000_000_000 + start;
      const store = open();
      const reference = new ReferenceStore();
      const run = freshSubject("pinned");
      for (let i = 0; i < script.length;) {
        now += script[i].advanceMs;
        await setClock(now);
        const batch = [script[i++]];
        while (batched && i < script.length && script[i].advanceMs === 0) batch.push(script[i++]);
        const checks = batch.map((command) => ({
          counters: countersOf({ ...command, subject: `${run}:${command.subject}` }),
          deadline: Date.now() + 1e9, // far, within a timer's range
        }));
        const expected = checks.map(({ counters }) => reference.check(counters, now));
        const { results } = await store.checkBatch(checks);
        // The counts (a store may also name the policy of a window counter's answer).
        const counts = results.map((answers) =>
          answers?.map(({ allowed, remaining, resetMs }) => ({ allowed, remaining, resetMs })) ??
            null
        );
        assert.deepEqual(counts, expected, `at ${now}`);
      }
      store.close();
    }),
    { numRuns },
  );
}

/** `agreesOnPinnedClock` on Redis stores whose scripts read a pinned clock (a fresh prefix each). */
async function onPinnedRedis(batched: boolean): Promise<void> {
  const client = await connectRedis(REDIS_URL!, 2_000);
  try {
    let now = 0;
    await agreesOnPinnedClock(
      () =>
        createRedisRateLimitStore({
          client: pinnedClient(client as unknown as RedisScriptClient, () => now),
          prefix: `${freshSubject("pinned")}:`,
        }),
      (ms) => {
        now = ms;
      },
      40,
      batched,
    );
  } finally {
    await client.close();
  }
}

if ((await readyStores("rate-limit model, pinned clock")).includes("redis")) {
  describe("redis store against the reference on a pinned clock", () => {
    it("agrees on allowed, remaining and resetMs as time moves (sub-buckets leave)", async () => {
      await onPinnedRedis(false);
    });

    it("agrees on batches holding the same counters again and again (each read once per batch)", async () => {
      await onPinnedRedis(true);
    });
  });
}

/** The functions the PostgreSQL store's statements call (the helpers they call are found in their texts). */
const STORE_FUNCTIONS = [
  "rate_limit_bucket_batch",
  "rate_limit_bucket_check",
  "rate_limit_credit_check",
  "credit_change_before",
  "credit_read",
];
/** Every read of the clock a function can make (each replaced by the pinned clock's one row). */
const CLOCK_READS =
  /\b(?:clock_timestamp|now|statement_timestamp|transaction_timestamp)\s*\(\s*\)|\b(?:current_timestamp|localtimestamp)\b/gi;
/** A function's own `SET search_path` clause (it would bypass the pool's: replaced in the copies). */
const SEARCH_PATH =
  /\bSET\s+search_path\s+(?:FROM\s+CURRENT|(?:=|TO)\s+(?:"[^"]*"|[\w$]+)(?:\s*,\s*(?:"[^"]*"|[\w$]+))*)/gi;
const pinClock = (text: string) => text.replace(CLOCK_READS, "(SELECT at FROM pinned_clock)");

/**
 * Each function's text in the migration that defines it last (`CREATE` or
 * `CREATE OR REPLACE FUNCTION`), the migrations read in order: what a
 * database that applied them all runs.
 */
async function latestFunctions(): Promise<Map<string, { migration: string; text: string }>> {
  const folder = new URL("../../prisma/migrations/", import.meta.url);
  const migrations = [];
  for await (const entry of Deno.readDir(folder)) {
    if (entry.isDirectory) migrations.push(entry.name);
  }
  const latest = new Map<string, { migration: string; text: string }>();
  for (const migration of migrations.sort()) {
    const sql = await Deno.readTextFile(new URL(`${migration}/migration.sql`, folder));
    for (const match of sql.matchAll(/CREATE\s+(?:OR\s+REPLACE\s+)?FUNCTION\s+"?(\w+)"?\s*\(/gi)) {
      const open = sql.indexOf("$$", match.index);
      const end = sql.indexOf(";", sql.indexOf("$$", open + 2)) + 1;
      latest.set(match[1], { migration, text: sql.slice(match.index, end) });
    }
  }
  return latest;
}

/**
 * A pool whose functions read a pinned clock: every function the store calls
 * (and each helper they call), from the migration that defines it last, every
 * clock read replaced by the one row of `pinned_clock`, created in a schema of
 * its own beside its own `rate_limit_buckets` and `credit_balances`. The pool
 * and each copy search that schema only (a function left out fails, it never
 * falls back to the public one); checked against the installed functions.
 * `calls` lists the function each statement called, with its rows; with
 * `watchRefusals`, a refused `rate_limit_bucket_check` counts in `unlocked`
 * when it left every row as it was (no row created, locked or written: 0020's
 * refusal from an unlocked read), else in `locked`.
 */
async function pinnedPool(schema: string, watchRefusals = false) {
  const latest = await latestFunctions();
  const names = new Set(STORE_FUNCTIONS);
  for (const name of names) {
    const { text } = latest.get(name) ?? assert.fail(`no migration defines ${name}`);
    for (const other of latest.keys()) {
      if (other !== name && new RegExp(`\\b${other}\\s*\\(`).test(text)) names.add(other);
    }
  }
  // In the order the migrations create them (a LANGUAGE sql body is checked when created).
  const ordered = [...names].sort((a, b) =>
    latest.get(a)!.migration.localeCompare(latest.get(b)!.migration)
  );
  const copies = ordered.map((name) => {
    const { text } = latest.get(name)!;
    const head = text.slice(0, text.indexOf("$$"));
    const copy = head.replace(SEARCH_PATH, "") + pinClock(text.slice(head.length));
    assert.doesNotMatch(copy, CLOCK_READS, name);
    assert.doesNotMatch(copy.slice(0, copy.indexOf("$$")), /search_path/i, name);
    assert.doesNotMatch(copy, /\bpublic\s*\./i, `${name} names the public schema`);
    return { name, copy, reads: text.match(CLOCK_READS)?.length ?? 0 };
  });
  // Each function the store calls reads the clock, in the copy the pinned one.
  for (const name of STORE_FUNCTIONS) {
    const { copy, reads } = copies.find((c) => c.name === name)!;
    assert.ok(reads > 0 && copy.includes("pinned_clock"), name);
  }
  const pool = new pg.Pool({
    connectionString: DATABASE_URL,
    max: 1,
    options: `-c search_path=${schema}`,
  });
  await pool.query(`CREATE SCHEMA ${schema}`);
  await pool.query(`CREATE TABLE pinned_clock (at TIMESTAMPTZ NOT NULL)`);
  await pool.query(`INSERT INTO pinned_clock VALUES (now())`);
  for (const table of ["rate_limit_buckets", "credit_balances"]) {
    await pool.query(`CREATE TABLE ${table} (LIKE public.${table} INCLUDING ALL)`);
  }
  for (const { copy } of copies) await pool.query(copy);
  const { rows: made } = await pool.query(
    `SELECT oid::regprocedure::text AS signature FROM pg_proc WHERE pronamespace = $1::regnamespace`,
    [schema],
  );
  for (const { signature } of made) {
    await pool.query(`ALTER FUNCTION ${signature} SET search_path = ${schema}`);
  }
  // The copies are the installed functions (the migrations' last texts), clock reads aside.
  const { rows } = await pool.query(
    `SELECT p.proname::text AS name, n.nspname::text AS schema, p.prosrc, p.proconfig
     FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
     WHERE p.proname = ANY($1::text[]) AND n.nspname IN ('public', $2)`,
    [[...names], schema],
  );
  for (const name of names) {
    const pub = rows.filter((r) => r.name === name && r.schema === "public");
    const own = rows.filter((r) => r.name === name && r.schema === schema);
    assert.equal(pub.length, 1, `${name}: one installed version`);
    assert.equal(own.length, 1, `${name}: one pinned copy`);
    assert.equal(own[0].prosrc, pinClock(pub[0].prosrc), `${name}: the installed text`);
    assert.deepEqual(own[0].proconfig, [`search_path=${schema}`], name);
  }
  const calls: { fn: string; rows: Record<string, unknown>[] }[] = [];
  const refusals = { unlocked: 0, locked: 0 };
  const rowsNow = async () =>
    (await query(
      "SELECT count(*) || ':' || coalesce(string_agg(ctid::text || xmin::text || xmax::text, ',' ORDER BY subject, name, window_ms), '') AS s FROM rate_limit_buckets",
    )).rows[0].s;
  const query = pool.query.bind(pool) as (
    text: unknown,
    values?: unknown,
  ) => Promise<pg.QueryResult>;
  pool.query = (async (config: string | { text: string }, values?: unknown) => {
    const text = typeof config === "string" ? config : config.text;
    const fn = /FROM (\w+)\(/.exec(text)?.[1] ?? "";
    const before = watchRefusals && fn === "rate_limit_bucket_check" ? await rowsNow() : undefined;
    const result = await query(config, values);
    if (names.has(fn)) calls.push({ fn, rows: result.rows });
    if (before !== undefined && result.rows.some((r) => r.allowed === false)) {
      refusals[(await rowsNow()) === before ? "unlocked" : "locked"]++;
    }
    return result;
  }) as typeof pool.query;
  return {
    pool,
    calls,
    refusals,
    setClock: (ms: number) => query("UPDATE pinned_clock SET at = to_timestamp($1 / 1000.0)", [ms]),
    close: async () => {
      await query(`DROP SCHEMA ${schema} CASCADE`);
      await pool.end();
    },
  };
}

if ((await readyStores("rate-limit model, pinned clock")).includes("postgres")) {
  describe("postgres store against the reference on a pinned clock", () => {
    it("agrees on allowed, remaining and resetMs as time moves (sub-buckets leave); refusals answered from 0020's unlocked read", async () => {
      const pinned = await pinnedPool(`pinned_${crypto.randomUUID().replaceAll("-", "")}`, true);
      try {
        await agreesOnPinnedClock(
          () => createPostgresRateLimitStore({ pool: pinned.pool }),
          pinned.setClock,
          25,
        );
        // Every check one statement of rate_limit_bucket_check; refusals among them, each
        // leaving every row as it was (one connection: the unlocked read refuses first).
        assert.deepEqual(
          new Set(pinned.calls.map((c) => c.fn)),
          new Set(["rate_limit_bucket_check"]),
        );
        assert.ok(
          pinned.refusals.unlocked > 0 && pinned.refusals.locked === 0,
          JSON.stringify(pinned.refusals),
        );
      } finally {
        await pinned.close();
      }
    });

    it("agrees on policies + credits (windows, balances, refills across hours, days and month ends) through rate_limit_credit_check", async () => {
      const pinned = await pinnedPool(`pinned_${crypto.randomUUID().replaceAll("-", "")}`);
      const fields = ({ allowed, remaining, resetMs, before }: CreditChangeResult) => ({
        allowed,
        remaining,
        resetMs,
        ...(before === undefined ? {} : { before }),
      });
      try {
        await fc.assert(
          fc.asyncProperty(
            creditCommands,
            fc.integer({ min: 0, max: 400 }),
            async (script, day0) => {
              let now = Date.UTC(2023, 11, 1) + day0 * 86_400_000 - 3_600_000;
              const store = createPostgresRateLimitStore({ pool: pinned.pool });
              const reference = new ReferenceCombined();
              const run = freshSubject("credits");
              for (const step of script) {
                now += step.advanceMs;
                await pinned.setClock(now);
                const command = { ...step, subject: `${run}:${step.subject}` };
                const credit = creditOf(command);
                // Far (the clock moves up to ~40 days a step), and no timer is set with it.
                const deadline = Date.now() + 1e12;
                pinned.calls.length = 0;
                if (command.change) {
                  const answer = await store.changeCredits(credit, command.change, deadline);
                  const expected = reference.credits.change(credit, command.change, now);
                  assert.deepEqual(answer && fields(answer), expected, `at ${now}`);
                  assert.deepEqual(pinned.calls.map((c) => c.fn), ["credit_change_before"]);
                } else {
                  const counters = [...countersOf(command), credit];
                  const { results } = await store.checkBatch([{ counters, deadline }]);
                  const expected = reference.check(counters, now);
                  assert.deepEqual(
                    results.map((r) => r?.map(fields) ?? null),
                    [expected],
                    `at ${now}`,
                  );
                  assert.deepEqual(pinned.calls.map((c) => c.fn), ["rate_limit_credit_check"]);
                }
              }
              store.close();
            },
          ),
          { numRuns: 200 },
        );
      } finally {
        await pinned.close();
      }
    });
  });
}

/** Longer runs: 3 to 8 sequences of `creditCommands`, one after the other (a balance lives on). */
const MAX_SCRIPTS = 8;
const longCreditCommands = fc.array(creditCommands, { minLength: 3, maxLength: MAX_SCRIPTS })
  .map((scripts) => scripts.flat());

/**
 * Random sequences of checks (window policies and a credit counter with a
 * refill rule of `REFILLS`), `changeCredits` set/add and `readCredits` reads
 * through a Redis store whose scripts read a pinned clock, as time crosses
 * sub-buckets, hours, days and month ends (29–31 clamps): each answer equals
 * `ReferenceCombined`'s (allowed, remaining, resetMs of windows and balances).
 * Before each step both subjects' balances of its rule are read (a balance
 * the store does not hold yet is `null`). With `batched`, a run of checks at
 * one moment is sent as one batch (a change is sent alone).
 */
async function creditsAgreeOnPinnedRedis(batched: boolean, numRuns: number): Promise<void> {
  const client = await connectRedis(REDIS_URL!, 2_000);
  try {
    let now = 0;
    const deadline = () => Date.now() + 1e12; // far past every pinned moment of a run
    /** A balance as read (no balance before: that is a change's). */
    const plain = (r: CounterResult | null) =>
      r && { allowed: r.allowed, remaining: r.remaining, resetMs: r.resetMs };
    /** A change's answer: a balance and the balance it was applied to. */
    const changed = (r: CreditChangeResult | null) => r && { ...plain(r), before: r.before };
    await fc.assert(
      fc.asyncProperty(
        longCreditCommands,
        fc.integer({ min: 0, max: 400 }),
        async (script, day0) => {
          now = Date.UTC(2023, 11, 1) + day0 * 86_400_000 - 3_600_000;
          const store = createRedisRateLimitStore({
            client: pinnedClient(client as unknown as RedisScriptClient, () => now),
            prefix: `${freshSubject("pinned-credits")}:`,
          });
          const reference = new ReferenceCombined();
          const run = freshSubject("pinned-credits");
          const steps = script.map((command) => ({
            ...command,
            subject: `${run}:${command.subject}`,
          }));
          /** The counters of step `k`'s check: its windows, then its balance. */
          const countersAt = (k: number) => [...countersOf(steps[k]), creditOf(steps[k])];
          for (let i = 0; i < steps.length;) {
            now += steps[i].advanceMs;
            const at = `at ${new Date(now).toISOString()} (step ${i})`;
            // Reads: the refill due counted, nothing written.
            const read = [`${run}:s1`, `${run}:s2`].map((subject) =>
              creditOf({ ...steps[i], subject })
            );
            assert.deepEqual(
              (await store.readCredits(read)).map(plain),
              read.map((c) =>
                reference.credits.balances.has(`${c.subject}|${c.name}`)
                  ? plain(reference.credits.change(c, { add: 0 }, now))
                  : null
              ),
              `read ${at}`,
            );
            const { change } = steps[i];
            if (change) {
              const credit = creditOf(steps[i++]);
              assert.deepEqual(
                changed(await store.changeCredits(credit, change, deadline())),
                reference.credits.change(credit, change, now),
                `change ${JSON.stringify(change)} ${at}`,
              );
              continue;
            }
            const batch = [i++];
            while (batched && i < steps.length && steps[i].advanceMs === 0 && !steps[i].change) {
              batch.push(i++);
            }
            const checks = batch.map((k) => ({ counters: countersAt(k), deadline: deadline() }));
            const expected = checks.map(({ counters }) => reference.check(counters, now));
            const { results } = await store.checkBatch(checks);
            assert.deepEqual(results.map((answers) => answers?.map(plain) ?? null), expected, at);
          }
          store.close();
        },
      ),
      { numRuns },
    );
  } finally {
    await client.close();
  }
}

if ((await readyStores("rate-limit model, credits on a pinned clock")).includes("redis")) {
  describe("redis store: policy + credits against the reference on a pinned clock", () => {
    it("agrees on windows and balances: spends, refusals, refills across hours, days and month ends, set/add, reads", async () => {
      await creditsAgreeOnPinnedRedis(false, 40);
    });

    it("agrees with each run of checks at one moment sent as one batch", async () => {
      await creditsAgreeOnPinnedRedis(true, 30);
    });
  });
}
