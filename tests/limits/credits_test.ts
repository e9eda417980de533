/**
 * Credit counters on each real store: the refill boundaries of the Lua script
 * and of the SQL function equal `creditPeriod`; three clients crossing one
 * refill boundary (real time) see exactly one refill; a credit denial keeps the
 * window counts and a rate-limit denial keeps the balance (1,000 of 1,000);
 * set/add racing with spends; on Redis, a drained balance reloads after the
 * key is lost, refunding only the spends since the drain, a balance
 * anchored is not drained until spent again, and a drain begun before a change
 * of a balance neither answers it nor, failing, puts it back.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import pg from "pg";
import { creditPeriod, refillParams } from "../../rate_limits/_refill.ts";
import { CREDIT_LUA } from "../../rate_limits/redis/_script.ts";
import { createRedisRateLimitStore, type RedisScriptClient } from "../../rate_limits/redis/mod.ts";
import type { CreditCounter, RateLimitStore, WindowCounter } from "../../rate_limits/store.ts";
import { REFILLS } from "../rate_limits/_model.ts";
import {
  checkOnce,
  connectRedis,
  DATABASE_URL,
  freshSubject,
  holdingReads,
  openStore,
  readyStores,
  REDIS_URL,
} from "./_services.ts";

const ats = fc.integer({ min: Date.UTC(1999, 0, 1), max: Date.UTC(2101, 0, 1) });
const refills = fc.constantFrom(...REFILLS.filter((r) => r !== undefined));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Trials where a denial by one kind left the other kind's state unchanged. */
async function allOrNothing(store: RateLimitStore, trials: number): Promise<number> {
  let kept = 0;
  for (let trial = 0; trial < trials; trial++) {
    const subject = freshSubject("aon");
    const window: WindowCounter = {
      kind: "window",
      subject,
      name: "w",
      limit: 1,
      windowMs: 60_000,
      cost: 1,
    };
    const credit: CreditCounter = { kind: "credit", subject, name: "c", cost: 1, initial: 5 };
    const wide = { ...window, name: "wide", limit: 10 };
    await checkOnce(store, [window]);
    const byWindow = await checkOnce(store, [window, credit]);
    const byCredit = await checkOnce(store, [wide, { ...credit, name: "empty", initial: 0 }]);
    const [wideAfter, creditAfter] = await checkOnce(store, [
      { ...wide, cost: 0 },
      { ...credit, cost: 0 },
    ]);
    if (
      !byWindow[0].allowed && byWindow[1].allowed && creditAfter.remaining === 5 &&
      byCredit[0].allowed && !byCredit[1].allowed && wideAfter.remaining === 10
    ) kept++;
  }
  return kept;
}

for (const kind of await readyStores("credits")) {
  describe(`${kind} store with credit counters`, () => {
    it("computes the refill boundaries as creditPeriod (UTC days, month ends clamped, everyMs)", async () => {
      const samples = fc.sample(fc.tuple(ats, refills), 300);
      if (kind === "postgres") {
        const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
        try {
          for (const [at, refill] of samples) {
            const [, every, day] = refillParams(refill);
            const { rows } = await pool.query(
              "SELECT start_ms::float8 AS s, next_ms::float8 AS n FROM credit_period($1, $2, $3)",
              [at, every, day],
            );
            assert.deepEqual(
              [rows[0].s, rows[0].n],
              creditPeriod(at, every, day),
              `${at} ${every} ${day}`,
            );
          }
        } finally {
          await pool.end();
        }
      } else {
        const client = await connectRedis(REDIS_URL!);
        try {
          for (const [at, refill] of samples) {
            const [, every, day] = refillParams(refill);
            const reply = await client.eval(
              `${CREDIT_LUA} local _, _, period = credit_helpers() local s, n = period(tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])) return { s, n }`,
              { keys: [], arguments: [String(at), String(every), String(day)] },
            ) as number[];
            assert.deepEqual(
              reply.map(Number),
              creditPeriod(at, every, day),
              `${at} ${every} ${day}`,
            );
          }
        } finally {
          client.destroy();
        }
      }
    });

    it("refills exactly once when three clients cross one boundary (real time, everyMs 3,000)", async () => {
      const clients = await Promise.all([0, 1, 2].map(() => openStore(kind)));
      try {
        const everyMs = 3_000;
        const credit: CreditCounter = {
          kind: "credit",
          subject: freshSubject("refill"),
          name: "credits",
          cost: 1,
          initial: 10,
          refill: { amount: 50, everyMs },
        };
        // Start 200 ms after a boundary; stop 1 s after the next one, 2 s before the one after.
        await sleep(everyMs - (Date.now() % everyMs) + 200);
        const stop = Date.now() - (Date.now() % everyMs) + everyMs + 1_000;
        const accepted = await Promise.all(clients.map(async ({ store }) => {
          let n = 0;
          while (Date.now() < stop) {
            const [result] = await checkOnce(store, [credit]);
            assert.ok(result.remaining >= 0);
            if (result.allowed) n++;
          }
          return n;
        }));
        console.log(`${kind}: accepted per client ${accepted.join(", ")}`);
        assert.equal(accepted.reduce((a, b) => a + b, 0), 60);
      } finally {
        await Promise.all(clients.map((c) => c.close()));
      }
    });

    it("a credit denial keeps the window counts, a rate-limit denial the balance, 1,000 of 1,000", async () => {
      const { store, close } = await openStore(kind);
      try {
        assert.equal(await allOrNothing(store, 1_000), 1_000);
      } finally {
        await close();
      }
    });

    it("applies set/add racing with concurrent spends atomically", async () => {
      const { store, close } = await openStore(kind);
      try {
        const credit: CreditCounter = {
          kind: "credit",
          subject: freshSubject("race"),
          name: "credits",
          cost: 1,
          initial: 100,
        };
        const changeBy = (store as Required<RateLimitStore>).changeCredits;
        const change = async (c: CreditCounter, how: { add: number } | { set: number }) => {
          const result = await changeBy(c, how, Date.now() + 30_000);
          assert.ok(result, "the change's deadline passed");
          return result;
        };
        const spends = Array.from({ length: 300 }, () => checkOnce(store, [credit]));
        const adds = Array.from({ length: 10 }, () => change(credit, { add: 20 }));
        const results = await Promise.all(spends);
        await Promise.all(adds);
        const spent = results.filter(([r]) => r.allowed).length;
        const [left] = await checkOnce(store, [{ ...credit, cost: 0 }]);
        assert.equal(left.remaining, 300 - spent);
        assert.ok(results.every(([r]) => r.remaining >= 0));
        assert.equal((await change(credit, { set: 7 })).remaining, 7);
        assert.equal((await change(credit, { add: -9 })).remaining, 0);
      } finally {
        await close();
      }
    });
  });
}

if (REDIS_URL) {
  describe("redis store durability", () => {
    it("drains changed balances; a lost balance reloads from the drained one", async () => {
      const client = await connectRedis(REDIS_URL!);
      try {
        const store = createRedisRateLimitStore({ client, prefix: "drain:" });
        const credit: CreditCounter = {
          kind: "credit",
          subject: freshSubject("drain"),
          name: "credits",
          cost: 1,
          initial: 100,
        };
        for (let i = 0; i < 30; i++) await checkOnce(store, [credit]);
        await checkOnce(store, [{ ...credit, cost: 0 }]);
        const [drained, ...rest] = await store.drainCreditChanges();
        assert.deepEqual(rest, []);
        assert.deepEqual([drained.subject, drained.name, drained.remaining], [
          credit.subject,
          "credits",
          70,
        ]);
        assert.ok(Math.abs(drained.at - Date.now()) < 5_000);
        assert.deepEqual(await store.drainCreditChanges(), []);
        for (let i = 0; i < 5; i++) await checkOnce(store, [credit]);
        await client.del(`drain:{${credit.subject}}:credits:c`); // Redis lost it
        const reloaded = { ...credit, initial: drained.remaining, initialAt: drained.at };
        const [after] = await checkOnce(store, [reloaded]);
        assert.equal(after.remaining, 69);
      } finally {
        client.destroy();
      }
    });

    it("a balance anchored ({ anchor: true }: its rule changing) is not drained under the old rule until spent again", async () => {
      const client = await connectRedis(REDIS_URL!);
      try {
        const store = createRedisRateLimitStore({ client, prefix: "anchor:" });
        const credit: CreditCounter = {
          kind: "credit",
          subject: freshSubject("anchor"),
          name: "credits",
          cost: 1,
          initial: 100,
          refill: { amount: 100, interval: "daily" },
        };
        await checkOnce(store, [credit]);
        await store.changeCredits(credit, { anchor: true }, Date.now() + 30_000);
        assert.deepEqual(await store.drainCreditChanges(), [], "the spend before it not drained");
        const { refill: _, ...ruled } = credit;
        await checkOnce(store, [ruled]);
        const drained = await store.drainCreditChanges();
        assert.deepEqual(drained.map((d) => d.remaining), [98], "spent again: drained");
      } finally {
        client.destroy();
      }
    });

    it("a drain begun before a change of a balance answers nothing for it, and failing, does not put it back: { anchor: true } and { set, anchor } (a rule change: the change's caller writes it back, no drain answers it)", async () => {
      const redis = await connectRedis(REDIS_URL!);
      try {
        const { client, holdNextRead } = holdingReads(redis as unknown as RedisScriptClient);
        const store = createRedisRateLimitStore({ client, prefix: "drainrace:" });
        const later = () => Date.now() + 30_000;
        const fresh = (): CreditCounter => ({
          kind: "credit",
          subject: freshSubject("drainrace"),
          name: "credits",
          cost: 10,
          initial: 100,
          refill: { amount: 100, interval: "monthly" },
        });
        const { refill: _, ...unruled } = fresh();
        const remaining = (drained: readonly { subject: string; remaining: number }[]) =>
          drained.map((d) => [d.subject, d.remaining]);
        for (const fails of [false, true]) {
          // { anchor: true }: the balance is kept, its rule changing.
          const kept = fresh();
          const other = fresh();
          await checkOnce(store, [kept]);
          await checkOnce(store, [other]);
          const { release, read } = holdNextRead();
          const late = store.drainCreditChanges(); // reads 90 and 90, answered late
          await read;
          await checkOnce(store, [{ ...kept, cost: 20 }]); // 70
          const change = await store.changeCredits(kept, { anchor: true }, later());
          assert.equal(change?.remaining, 70);
          release(fails ? new Error("ECONNRESET") : undefined);
          if (fails) {
            await assert.rejects(late, /ECONNRESET/);
            assert.deepEqual(
              remaining(await store.drainCreditChanges()),
              [[other.subject, 90]],
              "the other balance put back; the one changed since the drain began not",
            );
          } else {
            assert.deepEqual(remaining(await late), [[other.subject, 90]], "fails: false");
            assert.deepEqual(await store.drainCreditChanges(), []);
          }
          await checkOnce(store, [{ ...unruled, subject: kept.subject, cost: 1 }]);
          assert.deepEqual(remaining(await store.drainCreditChanges()), [[kept.subject, 69]]);
        }
        for (const fails of [false, true]) {
          // { set, anchor } (a new rule): no drain answers it, before the late one settles or after.
          const set = fresh();
          await checkOnce(store, [set]);
          const { release, read } = holdNextRead();
          const late = store.drainCreditChanges();
          await read;
          const ruled = { ...unruled, subject: set.subject };
          assert.equal(
            (await store.changeCredits(ruled, { set: 70, anchor: true }, later()))
              ?.remaining,
            70,
          );
          assert.deepEqual(await store.drainCreditChanges(), []);
          release(fails ? new Error("ECONNRESET") : undefined);
          if (fails) await assert.rejects(late, /ECONNRESET/);
          else assert.deepEqual(await late, [], "fails: false");
          assert.deepEqual(await store.drainCreditChanges(), [], `fails: ${fails}`);
        }
      } finally {
        redis.destroy();
      }
    });
  });
}
