import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import pg from "pg";
import {
  createPostgresRateLimitStore,
  type PostgresNamedQuery,
} from "../../../rate_limits/postgres/mod.ts";

const SERVER_AHEAD = 10_000;
/** A window counter and a credit counter of subject "s". */
const a = { kind: "window" as const, subject: "s", name: "a", limit: 5, windowMs: 1_000, cost: 1 };
const credit = { kind: "credit" as const, subject: "s", name: "c", cost: 1, initial: 9 };

/** A fake pg pool: the clock and settings statements, then `answer` for anything else. */
function fakePool(answer: (text: string, values?: unknown[]) => Record<string, unknown>[]) {
  const sent: [string, unknown[] | undefined, string | undefined][] = [];
  const pool = Object.assign(new EventEmitter(), {
    query: (statement: string | PostgresNamedQuery, values?: unknown[]) => {
      const named = typeof statement === "string" ? undefined : statement;
      const text = named?.text ?? statement as string;
      sent.push([text, named?.values ?? values, named?.name]);
      if (/^SELECT floor/.test(text)) {
        return Promise.resolve({ rows: [{ now_ms: Date.now() + SERVER_AHEAD }] });
      }
      if (/^SELECT current_setting/.test(text)) {
        return Promise.resolve({ rows: [{ read_only: "off", isolation: "read committed" }] });
      }
      return Promise.resolve({ rows: answer(text, values) });
    },
  });
  return { pool, sent };
}

// The SQL runs on real PostgreSQL in tests/limits/stores_test.ts; here, what the store sends.
describe("createPostgresRateLimitStore", () => {
  it("gives each statement's connection up 2 s past its deadline (query_timeout); one without a deadline past the longest limiter wait, deleteExpired never", async () => {
    const timeouts: (number | undefined)[] = [];
    const { pool } = fakePool(() => [{ allowed: true, remaining: 4, reset_ms: 900, now_ms: 0 }]);
    const query = pool.query;
    pool.query = (statement, values) => {
      timeouts.push(typeof statement === "string" ? NaN : statement.query_timeout);
      return query(statement, values);
    };
    const store = createPostgresRateLimitStore({ pool });
    await store.checkBatch([{ counters: [a], deadline: Date.now() + 500 }]);
    // The clock's statement and the check, both due by the check's deadline.
    assert.equal(timeouts.length, 2);
    for (const t of timeouts) assert.ok(t! > 2_000 && t! <= 2_500, String(t));
    timeouts.length = 0;
    await store.readCredits([credit]);
    assert.ok(timeouts[0]! > 61_900 && timeouts[0]! <= 62_000, String(timeouts[0]));
    timeouts.length = 0;
    await store.checkBatch([{ counters: [a], deadline: Date.now() - 10_000 }]);
    assert.equal(timeouts[0], 2_000, "a deadline passed: 2 s");
    timeouts.length = 0;
    // Past a timer's range (2^31 - 1 ms) a timer fires at once: the wait is capped there.
    await store.checkBatch([{ counters: [a], deadline: Date.now() + 1e12 }]);
    assert.equal(timeouts[0], 2 ** 31 - 1);
    timeouts.length = 0;
    pool.query = (statement) => {
      timeouts.push(typeof statement === "string" ? NaN : statement.query_timeout);
      return Promise.resolve({ rows: [{ n: 0 }] });
    };
    await store.deleteExpired();
    assert.deepEqual(timeouts, [undefined]);
  });

  it("reads the database's clock once, then sends ONE statement per batch with every check's counters and deadline", async () => {
    const now = Date.now() + SERVER_AHEAD;
    const { pool, sent } = fakePool(() => [
      { check_no: 1, allowed: true, remaining: 4, reset_ms: 900, now_ms: now },
      { check_no: 1, allowed: false, remaining: 0, reset_ms: 100, now_ms: now },
      { check_no: 2, allowed: null, remaining: null, reset_ms: null, now_ms: now },
    ]);
    const store = createPostgresRateLimitStore({ pool });
    const counters = [
      { kind: "window" as const, subject: "s", name: "a", limit: 5, windowMs: 1_000, cost: 1 },
      { kind: "credit" as const, subject: "s", name: "c", cost: 1, initial: 9 },
    ];
    const deadline = Date.now() + 50;
    const { results } = await store.checkBatch([
      { counters, deadline },
      { counters: counters.slice(0, 1), deadline },
    ]);
    assert.deepEqual(results, [
      [{ allowed: true, remaining: 4, resetMs: 900 }, {
        allowed: false,
        remaining: 0,
        resetMs: 100,
      }],
      null,
    ]);
    assert.equal(sent.length, 2);
    assert.match(sent[1][0], /FROM rate_limit_bucket_batch\(/);
    const values = sent[1][1]!;
    const [sentDeadline] = values[0] as number[];
    assert.ok(
      sentDeadline <= deadline + SERVER_AHEAD && sentDeadline > deadline + SERVER_AHEAD - 1_000,
    );
    // Per check its counts; window rows and balances once each, counters naming them by index.
    assert.deepEqual(values.slice(1, 11), [
      [1, 1],
      [1, 0],
      ["s"],
      ["a"],
      [1_000], // a row per (subject, name, windowMs)
      [1, 1],
      [5, 5],
      [1, 1],
      ["s"],
      ["c"],
    ]);
    assert.deepEqual(values.slice(16), [[1], [1]]);
    assert.equal(store.name, "postgres");
  });

  it("sends one check of window counters on distinct rows to rate_limit_bucket_check (six parameters), any other batch of one to the batch function", async () => {
    const now = Date.now() + SERVER_AHEAD;
    const { pool, sent } = fakePool((text) =>
      /rate_limit_bucket_check\(/.test(text)
        ? [
          { allowed: true, remaining: 4, reset_ms: 900, now_ms: now },
          { allowed: false, remaining: 0, reset_ms: 100, now_ms: now },
        ]
        : [{ check_no: 1, allowed: true, remaining: 7, reset_ms: 0, now_ms: now }]
    );
    const store = createPostgresRateLimitStore({ pool });
    const b = { ...a, subject: "t", limit: 1, cost: 2 };
    const deadline = Date.now() + 50;
    const { results } = await store.checkBatch([{ counters: [a, b], deadline }]);
    assert.deepEqual(results, [[{ allowed: true, remaining: 4, resetMs: 900 }, {
      allowed: false,
      remaining: 0,
      resetMs: 100,
    }]]);
    assert.match(sent[1][0], /FROM rate_limit_bucket_check\(/);
    const [sentDeadline, ...arrays] = sent[1][1]!;
    assert.ok(
      (sentDeadline as number) <= deadline + SERVER_AHEAD &&
        (sentDeadline as number) > deadline + SERVER_AHEAD - 1_000,
    );
    assert.deepEqual(arrays, [["s", "t"], ["a", "a"], [1_000, 1_000], [5, 1], [1, 2]]);
    // The same row twice, or the same balance twice: the batch function.
    for (const counters of [[a, { ...a, cost: 2 }], [a, credit, { ...credit, cost: 0 }]]) {
      await store.checkBatch([{ counters, deadline }]).catch(() => {});
      assert.match(sent[sent.length - 1][0], /FROM rate_limit_bucket_batch\(/);
    }
  });

  it("sends one check of distinct window rows and balances to rate_limit_credit_check (14 parameters), its answers back in the counters' order", async () => {
    const now = Date.now() + SERVER_AHEAD;
    const { pool, sent } = fakePool(() => [
      { allowed: true, remaining: 4, reset_ms: 900, now_ms: now },
      { allowed: true, remaining: 3, reset_ms: 800, now_ms: now },
      { allowed: false, remaining: 0, reset_ms: -1, now_ms: now },
      { allowed: true, remaining: 7, reset_ms: 50, now_ms: now },
    ]);
    const store = createPostgresRateLimitStore({ pool });
    const deadline = Date.now() + 50;
    const b = { ...a, name: "b", limit: 9 };
    const refilled = {
      ...credit,
      name: "d",
      cost: 2,
      initialAt: 123,
      refill: { amount: 50, everyMs: 1_000 },
    };
    // Credits first and between windows: the statement answers windows first, the store reorders.
    const { results } = await store.checkBatch([{ counters: [credit, a, refilled, b], deadline }]);
    assert.deepEqual(results, [[
      { allowed: false, remaining: 0, resetMs: -1 },
      { allowed: true, remaining: 4, resetMs: 900 },
      { allowed: true, remaining: 7, resetMs: 50 },
      { allowed: true, remaining: 3, resetMs: 800 },
    ]]);
    assert.match(sent[1][0], /FROM rate_limit_credit_check\(\$1::bigint, \$2::text\[\]/);
    assert.equal(sent[1][2], "api_kit_rate_limit_credit_check_1");
    const [sentDeadline, ...arrays] = sent[1][1]!;
    assert.ok(
      (sentDeadline as number) <= deadline + SERVER_AHEAD &&
        (sentDeadline as number) > deadline + SERVER_AHEAD - 1_000,
    );
    assert.deepEqual(arrays, [
      ["s", "s"],
      ["a", "b"],
      [1_000, 1_000],
      [5, 9],
      [1, 1],
      ["s", "s"],
      ["c", "d"],
      [9, 9],
      [null, 123],
      [0, 50], // refill amount, every ms, day
      [0, 1_000],
      [0, 0],
      [1, 2],
    ]);
    // Skipped past its deadline: null; a wrong number of rows: a TypeError (fails closed).
    const skipped = fakePool(() => [{ allowed: null, remaining: null, reset_ms: null, now_ms: 1 }]);
    const late = createPostgresRateLimitStore({ pool: skipped.pool });
    assert.deepEqual(await late.checkBatch([{ counters: [a, credit], deadline }]), {
      results: [null],
    });
    const short = createPostgresRateLimitStore({ pool: fakePool(() => [{ allowed: true }]).pool });
    await assert.rejects(short.checkBatch([{ counters: [a, credit], deadline }]), TypeError);
  });

  it("sends one window counter then one balance as 14 scalar parameters (no array for the client to serialise)", async () => {
    const now = Date.now() + SERVER_AHEAD;
    const { pool, sent } = fakePool(() => [
      { allowed: true, remaining: 4, reset_ms: 900, now_ms: now },
      { allowed: true, remaining: 8, reset_ms: -1, now_ms: now },
    ]);
    const store = createPostgresRateLimitStore({ pool });
    const deadline = Date.now() + 50;
    const monthly = { ...credit, refill: { amount: 40, interval: "monthly" as const, day: 3 } };
    const { results } = await store.checkBatch([{ counters: [a, monthly], deadline }]);
    assert.deepEqual(results, [[
      { allowed: true, remaining: 4, resetMs: 900 },
      { allowed: true, remaining: 8, resetMs: -1 },
    ]]);
    assert.match(sent[1][0], /FROM rate_limit_credit_check\(\$1::bigint, ARRAY\[\$2::text\]/);
    assert.equal(sent[1][2], "api_kit_rate_limit_credit_check_one_1");
    const [, ...scalars] = sent[1][1]!;
    assert.deepEqual(scalars, ["s", "a", 1_000, 5, 1, "s", "c", 9, null, 40, 0, 3, 1]);
  });

  it("sends a check of one window counter with six scalar parameters (no array for the client to serialise)", async () => {
    const now = Date.now() + SERVER_AHEAD;
    const { pool, sent } = fakePool(
      () => [{ allowed: true, remaining: 4, reset_ms: 900, now_ms: now }],
    );
    const store = createPostgresRateLimitStore({ pool });
    const deadline = Date.now() + 50;
    const { results } = await store.checkBatch([{ counters: [a], deadline }]);
    assert.deepEqual(results, [[{ allowed: true, remaining: 4, resetMs: 900 }]]);
    assert.match(sent[1][0], /FROM rate_limit_bucket_check\(\$1::bigint, ARRAY\[\$2::text\]/);
    const [sentDeadline, ...scalars] = sent[1][1]!;
    assert.ok(
      (sentDeadline as number) <= deadline + SERVER_AHEAD &&
        (sentDeadline as number) > deadline + SERVER_AHEAD - 1_000,
    );
    assert.deepEqual(scalars, ["s", "a", 1_000, 5, 1]);
  });

  it("sends the check statements as named prepared statements, or as text with preparedStatements: false", async () => {
    const now = Date.now() + SERVER_AHEAD;
    const answer = (text: string) =>
      /rate_limit_bucket_check\(/.test(text)
        ? [{ allowed: true, remaining: 4, reset_ms: 0, now_ms: now }]
        : [
          { allowed: true, remaining: 4, reset_ms: 0, now_ms: now },
          { allowed: true, remaining: 8, reset_ms: 0, now_ms: now },
        ];
    for (const preparedStatements of [undefined, false]) {
      const { pool, sent } = fakePool(answer);
      const store = createPostgresRateLimitStore({ pool, preparedStatements });
      const deadline = Date.now() + 1_000;
      await store.checkBatch([{ counters: [a], deadline }]);
      await store.checkBatch([{ counters: [a, credit], deadline }]);
      const names = sent.slice(1).map(([, , name]) => name);
      if (preparedStatements === false) assert.deepEqual(names, [undefined, undefined]);
      else {
        assert.deepEqual(names, [
          "api_kit_rate_limit_check_one_2",
          "api_kit_rate_limit_credit_check_one_1",
        ]);
      }
      assert.equal(sent[0][2], undefined); // the clock: plain text
    }
  });

  it("rate_limit_bucket_check past the deadline is null; a wrong number of rows is a TypeError", async () => {
    let rows: Record<string, unknown>[] = [];
    const { pool } = fakePool(() => rows);
    const store = createPostgresRateLimitStore({ pool });
    const deadline = Date.now() + 50;
    rows = [{ allowed: null, remaining: null, reset_ms: null, now_ms: Date.now() }];
    assert.deepEqual(await store.checkBatch([{ counters: [a], deadline }]), { results: [null] });
    rows = [];
    await assert.rejects(store.checkBatch([{ counters: [a], deadline }]), TypeError);
  });

  it("follows a database clock stepped back at the first reply after the step: the next deadline sent is on the new clock, a check's and a credit change's", async () => {
    let ahead = SERVER_AHEAD;
    const { pool, sent } = fakePool((text) =>
      /credit_change_before/.test(text)
        ? [{ applied: true, remaining: 10, reset_ms: -1, before: 9, now_ms: Date.now() + ahead }]
        : [{ allowed: true, remaining: 4, reset_ms: 900, now_ms: Date.now() + ahead }]
    );
    const store = createPostgresRateLimitStore({ pool });
    /** Each call resolves to the deadline it sent. */
    const check = async (deadline: number) => {
      await store.checkBatch([{ counters: [a], deadline }]);
      return Number(sent.at(-1)![1]![0]);
    };
    const change = async (deadline: number) => {
      await store.changeCredits(credit, { add: 1 }, deadline);
      return Number(sent.at(-1)![1]![0]);
    };
    await check(Date.now() + 1_000); // the database's clock read first
    for (const [first, next] of [[change, check], [check, change]]) {
      ahead -= 5_000; // the database's clock steps back 5 s (NTP, a failover to a replica behind)
      await first(Date.now() + 5_000); // its reply shows the step
      const deadline = Date.now() + 1_000;
      const late = await next(deadline) - (deadline + ahead);
      assert.ok(late <= 0 && late > -1_000, `sent ${late} ms later than the true instant`);
    }
  });

  it("changeCredits resolves null when the database answers it was past the deadline", async () => {
    const { pool } = fakePool(
      () => [{ applied: false, remaining: null, reset_ms: null, now_ms: 1 }],
    );
    const store = createPostgresRateLimitStore({ pool });
    const credit = { kind: "credit" as const, subject: "s", name: "c", cost: 0, initial: 1 };
    assert.equal(await store.changeCredits(credit, { add: 1 }, Date.now()), null);
  });

  it("ready(): a missing migration is a TypeError naming it", async () => {
    /** `READY_SQL`'s rows of `names`, each in schema `app` and usable by role `app_rw`. */
    const functions = (...names: string[]) =>
      names.map((name) => ({
        name,
        version: null,
        usable: true,
        schema: "app",
        executable: true,
        signature: `app.${name}(bigint)`,
        role: "app_rw",
      }));
    const { pool, sent } = fakePool(() =>
      functions("credit_change", "credit_lock", "credit_refill", "credit_period")
    );
    await assert.rejects(
      createPostgresRateLimitStore({ pool }).ready(),
      (e) =>
        e instanceof TypeError &&
        /apply prisma\/migrations\/0012_rate_limit_batches/.test(e.message),
    );
    assert.match(sent[0][0], /FROM pg_proc/);
    assert.ok((sent[0][1]![0] as string[]).includes("rate_limit_bucket_check"));
    // Every function there, rate_limit_bucket_check as 0019 made it (no comment naming 0020).
    const every = functions(
      "credit_change",
      "credit_lock",
      "credit_refill",
      "credit_period",
      "credit_change_before",
      "credit_read",
      "rate_limit_bucket_batch",
      "rate_limit_bucket_check",
    );
    const older = fakePool(() => every);
    await assert.rejects(
      createPostgresRateLimitStore({ pool: older.pool }).ready(),
      (e) =>
        e instanceof TypeError &&
        /misses rate_limit_bucket_check of 0020_rate_limit_refusal_read: apply prisma\/migrations\/0020_rate_limit_refusal_read\//
          .test(e.message),
    );
    // Missing 0019 as well: the first migration missing is named with its functions, then the
    // later one, so one round applies both.
    const oldest = fakePool(() => every.slice(0, -1));
    await assert.rejects(
      createPostgresRateLimitStore({ pool: oldest.pool }).ready(),
      (e) =>
        e instanceof TypeError &&
        /misses rate_limit_bucket_check: apply prisma\/migrations\/0019_rate_limit_bucket_check\/migration\.sql, then 0020_rate_limit_refusal_read and 0021_rate_limit_credit_check/
          .test(e.message),
    );
    // An empty database: every migration the store needs, in order, in one message.
    const empty = fakePool(() => []);
    await assert.rejects(
      createPostgresRateLimitStore({ pool: empty.pool }).ready(),
      (e) =>
        e instanceof TypeError &&
        e.message ===
          "the PostgreSQL rate-limit store misses credit_change, credit_lock, credit_refill, " +
            "credit_period: apply prisma/migrations/0009_credit_balances/migration.sql, then " +
            "0012_rate_limit_batches, 0015_rate_limit_buckets, 0019_rate_limit_bucket_check, " +
            "0020_rate_limit_refusal_read and 0021_rate_limit_credit_check (each " +
            "prisma/migrations/<name>/migration.sql, in this order)",
    );
    // Everything up to 0020 there, rate_limit_credit_check missing: 0021 named.
    const upTo20 = [
      ...every,
      ...functions("rate_limit_bucket_check").map((row) => ({
        ...row,
        version: "0020_rate_limit_refusal_read",
      })),
    ];
    await assert.rejects(
      createPostgresRateLimitStore({ pool: fakePool(() => upTo20).pool }).ready(),
      (e) =>
        e instanceof TypeError &&
        /misses rate_limit_credit_check: apply prisma\/migrations\/0021_rate_limit_credit_check\//
          .test(e.message),
    );
    // Every privilege on the tables held: GRANTS answers no row.
    const current = fakePool((text) =>
      /has_table_privilege/.test(text) ? [] : [...upTo20, ...functions("rate_limit_credit_check")]
    );
    await createPostgresRateLimitStore({ pool: current.pool }).ready();
    // One function without EXECUTE, its schema without USAGE: each named with its GRANT.
    const [last, ...rest] = [...upTo20, ...functions("rate_limit_credit_check")].reverse();
    const denied = fakePool((text) =>
      /has_table_privilege/.test(text)
        ? []
        : [...rest.map((row) => ({ ...row, usable: false })), { ...last, executable: false }]
    );
    await assert.rejects(
      createPostgresRateLimitStore({ pool: denied.pool }).ready(),
      (e) =>
        e instanceof TypeError &&
        e.message ===
          "the PostgreSQL rate-limit store's role app_rw lacks USAGE on schema app and EXECUTE " +
            "on app.rate_limit_credit_check(bigint): GRANT USAGE ON SCHEMA app TO app_rw; " +
            "GRANT EXECUTE ON FUNCTION app.rate_limit_credit_check(bigint) TO app_rw; " +
            "(docs/operations.md)",
    );
    const down = { query: () => Promise.reject(new Error("ECONNREFUSED")) };
    await assert.rejects(
      createPostgresRateLimitStore({ pool: down }).ready(),
      (e) => !(e instanceof TypeError),
    );
  });

  it("every statement's error of a misconfiguration, missing migration or unreadable row (by its SQLSTATE) is a TypeError naming it, the error its cause; an outage's error as it is", async () => {
    /** A pg `DatabaseError` as the pool rejects with it. */
    const failing = (code?: string) => {
      const error = Object.assign(new Error(`failed with ${code}`), { code });
      return fakePool(() => {
        throw error;
      });
    };
    const b = { ...a, subject: "t" };
    /** Every call of the store, each sending at least one statement. */
    const calls = [
      (s: ReturnType<typeof createPostgresRateLimitStore>) =>
        s.checkBatch([{ counters: [a], deadline: Date.now() + 5_000 }]),
      (s: ReturnType<typeof createPostgresRateLimitStore>) =>
        s.checkBatch([{ counters: [a, credit], deadline: Date.now() + 5_000 }]),
      (s: ReturnType<typeof createPostgresRateLimitStore>) =>
        s.checkBatch([{ counters: [a, b], deadline: Date.now() + 5_000 }, {
          counters: [a],
          deadline: Date.now() + 5_000,
        }]),
      (s: ReturnType<typeof createPostgresRateLimitStore>) =>
        s.changeCredits(credit, { add: 1 }, Date.now() + 5_000),
      (s: ReturnType<typeof createPostgresRateLimitStore>) => s.readCredits([credit]),
      (s: ReturnType<typeof createPostgresRateLimitStore>) => s.deleteExpired(),
      (s: ReturnType<typeof createPostgresRateLimitStore>) => s.ready(),
    ];
    // Privilege, undefined function or table, syntax, data exception (a head out of range),
    // a function's RAISE, INTO STRICT finding nothing, internal error, the check functions'
    // unreadable row (migration 0031).
    for (
      const code of [
        "42501",
        "42883",
        "42P01",
        "42601",
        "22003",
        "P0001",
        "P0002",
        "XX000",
        "RL001",
      ]
    ) {
      for (const call of calls) {
        const store = createPostgresRateLimitStore({ pool: failing(code).pool, logger: () => {} });
        await assert.rejects(call(store), (e) => {
          assert.ok(e instanceof TypeError, `${code}: ${e}`);
          assert.match(e.message, new RegExp(`SQLSTATE ${code}\\b.*failed with ${code}`));
          assert.equal((e.cause as { code: string }).code, code);
          return true;
        });
      }
    }
    // Connection, resources, lock not available, cancelled (statement_timeout), serialization,
    // deadlock, read-only transaction, a socket's error, no code at all: unavailable.
    for (
      const code of [
        "08006",
        "53300",
        "55P03",
        "57014",
        "57P01",
        "40001",
        "40P01",
        "25006",
        "EPIPE",
        undefined,
      ]
    ) {
      for (const call of calls) {
        const store = createPostgresRateLimitStore({ pool: failing(code).pool, logger: () => {} });
        await assert.rejects(call(store), (e) => {
          assert.ok(!(e instanceof TypeError), `${code}: ${e}`);
          assert.equal((e as { code?: string }).code, code);
          return true;
        });
      }
    }
  });

  it("listens for the pool's errors itself, one line per interval, and stops on close", () => {
    const { pool } = fakePool(() => []);
    const lines: string[] = [];
    const store = createPostgresRateLimitStore({ pool, logger: (line) => lines.push(line) });
    pool.emit("error", new Error("terminating connection due to administrator command"));
    pool.emit("error", new Error("again"));
    assert.equal(lines.length, 1);
    assert.match(lines[0], /^rate-limit store postgres: client error: terminating/);
    store.close();
    assert.equal(pool.listenerCount("error"), 0);
  });

  it("throws a TypeError without a pool", () => {
    assert.throws(() => createPostgresRateLimitStore({} as never), TypeError);
  });

  it("says to pass { pool } when given a pg pool in place of its options, in one short line", async () => {
    const pool = new pg.Pool({ connectionString: "postgresql://nobody@127.0.0.1:1/none" });
    assert.throws(() => createPostgresRateLimitStore(pool as never), {
      name: "TypeError",
      message: "createPostgresRateLimitStore takes options: pass the pool as `{ pool }`",
    });
    await pool.end();
  });

  it("refuses an unknown option, a non-boolean preparedStatements or durableWindows and a logger that is not a function by name, before listening to the pool", () => {
    const { pool } = fakePool(() => []);
    assert.throws(
      () => createPostgresRateLimitStore({ pool, durableWindow: true } as never),
      {
        name: "TypeError",
        message: /^createPostgresRateLimitStore: unknown option `durableWindow`/,
      },
    );
    for (const name of ["preparedStatements", "durableWindows"]) {
      for (const value of ["false", 0, null]) {
        assert.throws(
          () => createPostgresRateLimitStore({ pool, [name]: value } as never),
          {
            name: "TypeError",
            message: new RegExp(`^createPostgresRateLimitStore: ${name} must be a boolean`),
          },
        );
      }
    }
    assert.throws(
      () => createPostgresRateLimitStore({ pool, logger: "console.warn" } as never),
      { name: "TypeError", message: /^createPostgresRateLimitStore: logger must be a function$/ },
    );
    assert.equal(pool.listenerCount("error"), 0);
    for (const flag of [true, false, undefined]) {
      createPostgresRateLimitStore({
        pool,
        logger: () => {},
        preparedStatements: flag,
        durableWindows: flag,
      }).close();
    }
  });
});
