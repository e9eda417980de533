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
import type { CounterResult, RateLimitStore } from "../../rate_limits/store.ts";

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

/**
 * A pool whose `rate_limit_bucket_batch` and `rate_limit_bucket_check` read a
 * pinned clock: the migrations' function texts, `clock_timestamp()` replaced by the one row of
 * `pinned_clock`, created in a schema of its own beside its own
 * `rate_limit_buckets` (the credit functions stay the public ones).
 */
async function pinnedPool(schema: string) {
  const body = async (migration: string, fn: string) => {
    const sql = await Deno.readTextFile(
      new URL(`../../prisma/migrations/${migration}/migration.sql`, import.meta.url),
    );
    const start = sql.indexOf(`CREATE FUNCTION ${fn}(`);
    const text = sql.slice(start, sql.indexOf("$$;", start) + 3)
      .replaceAll("clock_timestamp()", "(SELECT at FROM pinned_clock)");
    assert.ok(start > 0 && text.includes("pinned_clock"));
    return text;
  };
  const functions = [
    await body("0015_rate_limit_buckets", "rate_limit_bucket_batch"),
    await body("0019_rate_limit_bucket_check", "rate_limit_bucket_check"),
  ];
  const pool = new pg.Pool({
    connectionString: DATABASE_URL,
    max: 1,
    options: `-c search_path=${schema},public`,
  });
  await pool.query(`CREATE SCHEMA ${schema}`);
  await pool.query(`CREATE TABLE pinned_clock (at TIMESTAMPTZ NOT NULL)`);
  await pool.query(`INSERT INTO pinned_clock VALUES (now())`);
  await pool.query(
    `CREATE TABLE rate_limit_buckets (LIKE public.rate_limit_buckets INCLUDING ALL)`,
  );
  for (const text of functions) await pool.query(text);
  return {
    pool,
    setClock: (ms: number) =>
      pool.query("UPDATE pinned_clock SET at = to_timestamp($1 / 1000.0)", [ms]),
    close: async () => {
      await pool.query(`DROP SCHEMA ${schema} CASCADE`);
      await pool.end();
    },
  };
}

if ((await readyStores("rate-limit model, pinned clock")).includes("postgres")) {
  describe("postgres store against the reference on a pinned clock", () => {
    it("agrees on allowed, remaining and resetMs as time moves (sub-buckets leave)", async () => {
      const pinned = await pinnedPool(`pinned_${crypto.randomUUID().replaceAll("-", "")}`);
      try {
        await agreesOnPinnedClock(
          () => createPostgresRateLimitStore({ pool: pinned.pool }),
          pinned.setClock,
          25,
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
 * Each step's credit cost: mostly its command's (0–4, as its windows'), else 5–12, above
 * some refill amounts (4–9): a spend that no refill can cover answers `resetMs` -1.
 */
const creditCosts = fc.array(
  fc.oneof(
    { arbitrary: fc.constant(undefined), weight: 3 },
    { arbitrary: fc.integer({ min: 5, max: 12 }), weight: 1 },
  ),
  { minLength: 60 * MAX_SCRIPTS, maxLength: 60 * MAX_SCRIPTS },
);

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
    const plain = (r: CounterResult | null) =>
      r && { allowed: r.allowed, remaining: r.remaining, resetMs: r.resetMs };
    await fc.assert(
      fc.asyncProperty(
        longCreditCommands,
        creditCosts,
        fc.integer({ min: 0, max: 400 }),
        async (script, costs, day0) => {
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
          /** The counters of step `k`'s check: its windows, then its balance at its credit cost. */
          const countersAt = (k: number) => [
            ...countersOf(steps[k]),
            creditOf({ ...steps[k], cost: costs[k] ?? steps[k].cost }),
          ];
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
                  ? reference.credits.change(c, { add: 0 }, now)
                  : null
              ),
              `read ${at}`,
            );
            const { change } = steps[i];
            if (change) {
              const credit = creditOf(steps[i++]);
              assert.deepEqual(
                plain(await store.changeCredits(credit, change, deadline())),
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
