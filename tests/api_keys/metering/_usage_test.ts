import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import {
  compileUsage,
  type CountedRow,
  OPEN_TIMES,
  readUsage,
  readUsageOfKeys,
  UsageRecorder,
} from "../../../api_keys/metering/_usage.ts";
import { zeroCounts } from "../../../api_keys/metering/_usage_counts.ts";
import { StorageAccess, type UsageAccess } from "../../../api_keys/storage/_access.ts";
import type {
  ApiKeyUsageBucket,
  ApiKeyUsageKeysReadQuery,
  ApiKeyUsageMetric,
  ApiKeyUsageReadQuery,
  ApiKeyUsageRow,
} from "../../../api_keys/metering/usage.ts";
import {
  type ApiKeyEvent,
  type ApiKeysService,
  type ApiKeyStorage,
  ApiKeyStorageError,
  generateKey,
  InMemoryApiKeyStorage,
} from "../../../api_keys/mod.ts";
import { createMemoryRateLimitStore, createRateLimiter } from "../../../rate_limits/mod.ts";
import { makeService, overrideStorage, READ_ORDERS, spyStorage } from "../helpers.ts";
import { CreditedStorage } from "../credited_storage.ts";
import { collectUnhandledRejections } from "../../reliability/harness.ts";

const HOUR = 3_600_000;
const T0 = Date.parse("2030-01-01T10:00:00.000Z");

/** A fake usage capability: logs each write (and each call's batch id), fails the ones `failing` says. */
function fakeAccess(failing: (call: number) => boolean = () => false) {
  const writes: ApiKeyUsageRow[][] = [];
  const batchIds: string[] = [];
  let calls = 0;
  const access: UsageAccess = {
    timeoutMs: 5_000,
    record(rows, batchId) {
      calls++;
      batchIds.push(batchId);
      if (failing(calls)) return Promise.reject(new Error("database down"));
      writes.push([...rows]);
      return Promise.resolve();
    },
    read: () => Promise.resolve([]),
    readKeys: (query) => Promise.resolve(query.keyIds.map(() => [])),
  };
  return { access, writes, batchIds, calls: () => calls };
}

function recorder(
  access: UsageAccess,
  clock: { now: number },
  options: { maxPendingKeys?: number; metrics?: ApiKeyUsageMetric[] } = {},
) {
  return new UsageRecorder({
    access,
    clock: () => new Date(clock.now),
    flushIntervalMs: HOUR,
    maxPendingKeys: options.maxPendingKeys ?? 100_000,
    emitMetric: options.metrics === undefined ? undefined : (m) => options.metrics!.push(m),
  });
}

const rowsOf = (writes: ApiKeyUsageRow[][]) => writes.flat();

/** A recorder at `T0` flushing every 100 ms over a fake capability, and its writes. */
function fastRecorder() {
  const { access, writes } = fakeAccess();
  const usage = new UsageRecorder({
    access,
    clock: () => new Date(T0),
    flushIntervalMs: 100,
    maxPendingKeys: 10,
    emitMetric: undefined,
  });
  return { usage, writes };
}

/** A wall clock at `T0` that, once `state.stepping`, steps an hour at each read (`state.reads`: the times read). */
function steppingClock() {
  const state = { now: T0, stepping: false, reads: [] as number[] };
  const clock = () => {
    const at = state.now;
    if (state.stepping) {
      state.reads.push(at);
      state.now += HOUR;
    }
    return new Date(at);
  };
  return { clock, state };
}

/** Creates keys of tenant `t1` on `service`, named (`names`: key id → name). */
function keyMaker(service: ApiKeysService) {
  const names = new Map<string, string>();
  const create = async (name: string, more: Record<string, unknown> = {}) => {
    const created = await service.create({ tenantId: "t1", name, scopes: READ_ORDERS, ...more });
    names.set(created.id, name);
    return created.key;
  };
  return { names, create };
}

describe("UsageRecorder", () => {
  it("counts per key and UTC hour: an hour boundary starts a new row; lastUsedAt is the latest accepted", async () => {
    const clock = { now: T0 + HOUR - 1 };
    const { access, writes } = fakeAccess();
    const usage = recorder(access, clock);
    usage.accepted("k1", "t1", 1, clock.now);
    usage.refused("k1", "t1", "api_key_scope_insufficient", clock.now);
    usage.refused("k2", "t2", "api_key_invalid", clock.now);
    clock.now = T0 + HOUR; // 11:00:00.000
    usage.accepted("k1", "t1", 5, clock.now);
    usage.refused("k1", "t1", "api_key_rate_limited", clock.now);
    usage.refused("k1", "t1", "api_key_usage_exceeded", clock.now);
    assert.equal(usage.pendingRows, 3);
    await usage.close();
    const rows = rowsOf(writes);
    assert.equal(writes.length, 1, "one write for three rows");
    assert.deepEqual(
      rows.map((r) => [r.keyId, r.bucket.toISOString(), r.accepted, r.cost]),
      [
        ["k1", "2030-01-01T10:00:00.000Z", 1, 1],
        ["k1", "2030-01-01T11:00:00.000Z", 1, 5],
        ["k2", "2030-01-01T10:00:00.000Z", 0, 0],
      ],
    );
    assert.equal(rows[0].refused.api_key_scope_insufficient, 1);
    assert.equal(rows[0].lastUsedAt?.getTime(), T0 + HOUR - 1);
    assert.equal(rows[1].refused.api_key_rate_limited, 1);
    assert.equal(rows[1].refused.api_key_usage_exceeded, 1);
    assert.equal(rows[1].lastUsedAt?.getTime(), T0 + HOUR);
    assert.equal(rows[2].refused.api_key_invalid, 1);
    assert.equal(rows[2].lastUsedAt, null, "a refusal never sets lastUsedAt");
    assert.equal(rows[2].tenantId, "t2");
    assert.equal(usage.pendingRows, 0);
  });

  it("a flush of 2,500 keys is 3 writes of at most 1,000 rows, in (key, hour) order", async () => {
    const { access, writes } = fakeAccess();
    const usage = recorder(access, { now: T0 });
    for (let round = 0; round < 3; round++) {
      for (let i = 2_499; i >= 0; i--) usage.accepted(`k${String(i).padStart(5, "0")}`, "t", 1, T0);
    }
    await usage.flush();
    assert.deepEqual(writes.map((w) => w.length), [1_000, 1_000, 500]);
    const ids = rowsOf(writes).map((r) => r.keyId);
    assert.deepEqual(ids, [...ids].sort());
    assert.ok(rowsOf(writes).every((r) => r.accepted === 3));
    await usage.close();
    assert.equal(writes.length, 3, "nothing left for close()");
  });

  it("a failed write keeps its rows and the later ones; the next flush retries them as they were (same rows, same batch id), then the new counts", async () => {
    const metrics: ApiKeyUsageMetric[] = [];
    const { access, writes, batchIds } = fakeAccess((call) => call === 2);
    const usage = recorder(access, { now: T0 }, { metrics });
    for (let i = 0; i < 1_500; i++) usage.accepted(`k${String(i).padStart(4, "0")}`, "t", 1, T0);
    const error = await usage.flush();
    assert.match(String(error), /database down/);
    assert.equal(usage.pendingRows, 500, "the failed write's 500 rows are held");
    usage.accepted("k1499", "t", 1, T0);
    usage.refused("k1499", "t", "api_key_revoked", T0);
    await usage.flush();
    assert.deepEqual(writes.map((w) => w.length), [1_000, 500, 1]);
    assert.equal(batchIds[2], batchIds[1], "the retry carries the failed write's batch id");
    assert.equal(new Set(batchIds).size, 3, "every other write has its own");
    const retried = writes[1].find((r) => r.keyId === "k1499")!;
    const later = writes[2][0];
    assert.deepEqual([retried.accepted, retried.refused.api_key_revoked], [1, 0]);
    assert.deepEqual([later.keyId, later.accepted, later.refused.api_key_revoked], [
      "k1499",
      1,
      1,
    ]);
    assert.deepEqual(metrics.map((m) => [m.outcome, m.rows]), [
      ["written", 1_000],
      ["failed", 500],
      ["written", 500],
      ["written", 1],
    ]);
    await usage.close();
  });

  it("past maxPendingKeys the oldest rows are dropped, failed ones first, with a metric", async () => {
    const metrics: ApiKeyUsageMetric[] = [];
    const { access, writes } = fakeAccess((call) => call === 1);
    const usage = recorder(access, { now: T0 }, { maxPendingKeys: 3, metrics });
    usage.accepted("a", "t", 1, T0);
    usage.accepted("b", "t", 1, T0);
    await usage.flush(); // fails: a and b held
    usage.accepted("c", "t", 1, T0);
    usage.accepted("d", "t", 1, T0); // 4 rows: a dropped
    usage.accepted("e", "t", 1, T0); // b dropped
    assert.equal(usage.pendingRows, 3);
    assert.deepEqual(
      metrics.filter((m) => m.outcome === "dropped").map((m) => m.rows),
      [1, 1],
    );
    await usage.close();
    assert.deepEqual(rowsOf(writes).map((r) => r.keyId), ["c", "d", "e"]);
  });

  it("rows being written do not count against maxPendingKeys: requests during a write lose nothing; a failed write's rows count again", async () => {
    const metrics: ApiKeyUsageMetric[] = [];
    const writes: string[][] = [];
    const gates: { resolve: () => void; reject: (e: Error) => void }[] = [];
    const access: UsageAccess = {
      timeoutMs: 5_000,
      record: (rows) =>
        new Promise<void>((resolve, reject) => {
          gates.push({
            resolve: () => (writes.push(rows.map((r) => r.keyId)), resolve()),
            reject,
          });
        }),
      read: () => Promise.resolve([]),
      readKeys: (query) => Promise.resolve(query.keyIds.map(() => [])),
    };
    const usage = recorder(access, { now: T0 }, { maxPendingKeys: 3, metrics });
    for (const key of ["a", "b", "c"]) usage.accepted(key, "t", 1, T0);
    const flushed = usage.flush(); // a, b, c in flight
    await Promise.resolve();
    for (const key of ["d", "e", "f"]) usage.accepted(key, "t", 1, T0); // 3 waiting: none dropped
    assert.equal(metrics.filter((m) => m.outcome === "dropped").length, 0);
    gates.shift()!.resolve();
    await flushed;
    const next = usage.flush(); // d, e, f in flight
    await Promise.resolve();
    usage.accepted("g", "t", 1, T0);
    gates.shift()!.reject(new Error("database down"));
    await next; // d, e, f and g held: 4 rows, d dropped (a failed write's oldest first)
    assert.deepEqual(
      metrics.filter((m) => m.outcome === "dropped").map((m) => m.rows),
      [1],
    );
    assert.equal(usage.pendingRows, 3);
    const closed = usage.close();
    for (let i = 0; i < 10 && gates.length === 0; i++) await Promise.resolve();
    while (gates.length > 0) {
      gates.shift()!.resolve();
      for (let i = 0; i < 10 && gates.length === 0; i++) await Promise.resolve();
    }
    await closed;
    assert.deepEqual(writes, [["a", "b", "c"], ["e", "f"], ["g"]]);
  });

  it("past maxPendingKeys the rows of earlier hours go first, oldest first, then the current hour's", async () => {
    const metrics: ApiKeyUsageMetric[] = [];
    const { access, writes } = fakeAccess();
    const clock = { now: T0 };
    const usage = recorder(access, clock, { maxPendingKeys: 3, metrics });
    usage.accepted("a", "t", 1, clock.now);
    usage.accepted("b", "t", 1, clock.now);
    clock.now = T0 + HOUR;
    usage.accepted("c", "t", 1, clock.now);
    usage.accepted("a", "t", 1, clock.now); // 4 rows: a of 10:00 dropped
    clock.now = T0 + 2 * HOUR;
    usage.accepted("d", "t", 1, clock.now); // b of 10:00 dropped
    usage.accepted("e", "t", 1, clock.now); // c of 11:00 dropped
    usage.accepted("f", "t", 1, clock.now); // a of 11:00 dropped
    usage.accepted("g", "t", 1, clock.now); // d, the oldest of the current hour, dropped
    assert.equal(usage.pendingRows, 3);
    assert.deepEqual(metrics.map((m) => m.rows), [1, 1, 1, 1, 1]);
    await usage.close();
    assert.deepEqual(
      rowsOf(writes).map((r) => [r.keyId, r.bucket.getTime() - T0]),
      [["e", 2 * HOUR], ["f", 2 * HOUR], ["g", 2 * HOUR]],
    );
  });

  it("late counts of the previous hour (requests that started before the boundary) keep one row per key and hour: none dropped; an unknown prefix starts no row", async () => {
    const T = T0 + HOUR; // 11:00
    const metrics: ApiKeyUsageMetric[] = [];
    const { access, writes } = fakeAccess();
    const usage = recorder(access, { now: T }, { maxPendingKeys: 20, metrics });
    let accepted = 0;
    for (let i = 0; i < 50; i++) {
      for (let k = 0; k < 10; k++) {
        usage.accepted(`k${k}`, "t", 1, T + i);
        accepted++;
      }
      usage.refused(null, "t", "api_key_invalid", T - 1); // an unknown prefix, late
    }
    assert.equal(usage.pendingRows, 10, "an unknown prefix's late count starts no hour");
    for (let i = 0; i < 50; i++) {
      for (let k = 0; k < 10; k++) {
        usage.accepted(`k${k}`, "t", 1, T + 100 + i);
        usage.accepted(`k${k}`, "t", 2, T - 100 + i); // the previous hour, late
        accepted += 2;
      }
    }
    assert.equal(usage.pendingRows, 20, "one row per key and hour");
    await usage.close();
    assert.deepEqual(metrics.filter((m) => m.outcome === "dropped"), []);
    const rows = rowsOf(writes);
    assert.equal(rows.reduce((n, r) => n + r.accepted, 0), accepted);
    assert.deepEqual(
      rows.filter((r) => r.keyId === "k3").map((r) => [
        r.bucket.getTime(),
        r.accepted,
        r.cost,
        r.lastUsedAt?.getTime(),
      ]),
      [[T - HOUR, 50, 100, T - 100 + 49], [T, 100, 100, T + 100 + 49]],
    );
    assert.equal(rows.length, 20);
  });

  it("a late count of an hour already flushed is counted in its own hour, in one row however the counts alternate; refusedInstead finds it", async () => {
    const T = T0 + HOUR;
    const { access, writes } = fakeAccess();
    const usage = recorder(access, { now: T });
    usage.accepted("k", "t", 1, T - 1);
    usage.accepted("k", "t", 1, T);
    await usage.flush();
    assert.equal(rowsOf(writes).length, 2);
    let row: CountedRow | undefined;
    for (let i = 0; i < 5; i++) {
      row = usage.accepted("k", "t", 1, T - 10 + i, true); // 10:59:59.99x, after the flush
      usage.accepted("k", "t", 1, T + 10 + i);
    }
    assert.equal(usage.pendingRows, 2);
    usage.refusedInstead(row!, "api_key_rate_limited", 1, T - 6); // the last, taken back
    await usage.close();
    assert.deepEqual(
      rowsOf(writes).slice(2).map((r) => [
        r.bucket.getTime(),
        r.accepted,
        r.refused.api_key_rate_limited,
        r.lastUsedAt?.getTime(),
      ]),
      [[T - HOUR, 4, 1, T - 7], [T, 5, 0, T + 14]],
    );
  });

  it("takes back in any order: lastUsedAt is the latest accepted request left, none with no accepted request left", async () => {
    const { access, writes } = fakeAccess();
    const usage = recorder(access, { now: T0 });
    usage.accepted("k", "t", 1, T0 + 5); // never taken back
    const a = usage.accepted("k", "t", 1, T0 + 7, true);
    const b = usage.accepted("k", "t", 1, T0 + 9, true);
    usage.accepted("k", "t", 1, T0 + 9, true); // a second request at B's time
    usage.refusedInstead(a, "api_key_scope_insufficient", 1, T0 + 7);
    usage.refusedInstead(b, "api_key_scope_insufficient", 1, T0 + 9);
    usage.accepted("m", "t", 1, T0 + 3);
    const m = usage.accepted("m", "t", 1, T0 + 7, true);
    usage.accepted("m", "t", 1, T0 + 9, true);
    usage.refusedInstead(m, "api_key_scope_insufficient", 1, T0 + 7); // the earlier one first
    usage.refusedInstead(m, "api_key_scope_insufficient", 1, T0 + 9);
    await usage.flush();
    usage.accepted("j", "t", 1, T0 + 3, true);
    const c = usage.accepted("j", "t", 1, T0 + 4, true);
    usage.refusedInstead(c, "api_key_rate_limited", 1, T0 + 3); // the earlier one, then the later
    usage.refusedInstead(c, "api_key_rate_limited", 1, T0 + 4);
    await usage.close();
    assert.deepEqual(
      rowsOf(writes).map((r) => [r.keyId, r.accepted, r.lastUsedAt?.getTime() ?? null]),
      [["k", 2, T0 + 9], ["m", 1, T0 + 3], ["j", 0, null]],
    );
  });

  it(`past ${OPEN_TIMES} times that may be taken back, an earlier one is not kept: lastUsedAt may be older than the latest accepted request, never a refused one's`, async () => {
    const { access, writes } = fakeAccess();
    const usage = recorder(access, { now: T0 });
    usage.accepted("k", "t", 1, T0 + 1); // never taken back
    const k = usage.accepted("k", "t", 1, T0 + 2, true); // not kept past the bound
    for (let i = 0; i < OPEN_TIMES; i++) usage.accepted("k", "t", 1, T0 + 10 + i, true);
    for (let i = 0; i < OPEN_TIMES; i++) {
      usage.refusedInstead(k, "api_key_scope_insufficient", 1, T0 + 10 + i);
    }
    const j = usage.accepted("j", "t", 1, T0 + 2, true);
    for (let i = 0; i <= OPEN_TIMES; i++) usage.accepted("j", "t", 1, T0 + 10 + i, true);
    for (let i = 0; i <= OPEN_TIMES; i++) {
      usage.refusedInstead(j, "api_key_scope_insufficient", 1, T0 + 10 + i); // +10: not kept
    }
    await usage.close();
    assert.deepEqual(
      rowsOf(writes).map((r) => [r.keyId, r.accepted, r.lastUsedAt?.getTime() ?? null]),
      [["j", 1, null], ["k", 2, T0 + 1]],
    );
  });

  it("refusedInstead changes only the row the request was counted in: nothing once a flush took it or the bound dropped it", async () => {
    const { access, writes } = fakeAccess();
    const usage = recorder(access, { now: T0 }, { maxPendingKeys: 1 });
    const written = usage.accepted("k", "t", 2, T0 + 10, true);
    await usage.flush();
    usage.accepted("k", "t", 3, T0 + 15); // a new row of the same key and hour
    usage.refusedInstead(written, "api_key_scope_insufficient", 2, T0 + 10);
    await usage.flush();
    const dropped = usage.accepted("j", "t", 2, T0 + 20, true);
    usage.accepted("x", "t", 4, T0 + 25); // j's row dropped
    usage.accepted("j", "t", 5, T0 + 30); // x's row dropped, a new row of j
    usage.refusedInstead(dropped, "api_key_scope_insufficient", 2, T0 + 20);
    await usage.close();
    assert.deepEqual(
      rowsOf(writes).map((r) => [
        r.keyId,
        r.accepted,
        r.cost,
        r.refused.api_key_scope_insufficient,
        r.lastUsedAt?.getTime(),
      ]),
      [["k", 1, 2, 0, T0 + 10], ["k", 1, 3, 0, T0 + 15], ["j", 1, 5, 0, T0 + 30]],
    );
  });

  it("a cost total past 2^53 - 1 stays 2^53 - 1: read back by the service, hour and day", async () => {
    const { service, clocks } = makeService({ storage: new InMemoryApiKeyStorage(), usage: true });
    const { key } = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
    for (let i = 0; i < 11; i++) await service.authorize(key, { cost: 999_999_999_999_999 });
    await service.close();
    const window = { from: new Date(clocks.now - 24 * HOUR), to: new Date(clocks.now + 24 * HOUR) };
    for (const granularity of ["hour", "day"] as const) {
      const [bucket] = await service.usage("t1", { ...window, granularity });
      assert.deepEqual([bucket.accepted, bucket.cost], [11, Number.MAX_SAFE_INTEGER], granularity);
    }
  });

  it("close() flushes what is pending; a failed close rejects and keeps the rows for another close()", async () => {
    const { access, writes } = fakeAccess((call) => call === 1);
    const usage = recorder(access, { now: T0 });
    usage.accepted("k", "t", 1, T0);
    await assert.rejects(usage.close(), /database down/);
    assert.equal(usage.pendingRows, 1);
    await usage.close();
    assert.equal(rowsOf(writes)[0].accepted, 1);
  });

  it("exact against a model: keys counted across hours, the clock going back, flushes between (every (key, hour) sum and lastUsedAt)", async () => {
    const { access, writes } = fakeAccess();
    const clock = { now: T0 };
    const usage = recorder(access, clock);
    type Model = { accepted: number; cost: number; refused: number; lastUsed: number | null };
    const model = new Map<string, Model>();
    let seed = 42;
    const random = (n: number) => {
      seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
      return (seed >>> 8) % n;
    };
    let back = 0;
    for (let step = 0; step < 20_000; step++) {
      const roll = random(1_000);
      if (roll < 3) clock.now += HOUR - random(HOUR / 2); // the next hour (sometimes two)
      else if (roll < 5) {
        clock.now -= HOUR; // the clock goes back an hour
        back++;
      } else if (roll < 7) await usage.flush();
      else if (roll < 20) clock.now -= random(60_000); // a step back, mostly within the hour
      clock.now += random(50);
      const keyId = `k${random(300)}`;
      const hour = clock.now - (clock.now % HOUR);
      const id = `${keyId} ${hour}`;
      const row = model.get(id) ?? { accepted: 0, cost: 0, refused: 0, lastUsed: null };
      model.set(id, row);
      if (random(4) === 0) {
        usage.refused(keyId, "t", "api_key_scope_insufficient", clock.now);
        row.refused++;
      } else {
        const cost = 1 + random(3);
        usage.accepted(keyId, "t", cost, clock.now);
        row.accepted++;
        row.cost += cost;
        row.lastUsed = Math.max(row.lastUsed ?? -Infinity, clock.now);
      }
    }
    await usage.close();
    const stored = new Map<string, Model>();
    for (const r of rowsOf(writes)) {
      const id = `${r.keyId} ${r.bucket.getTime()}`;
      const row = stored.get(id) ?? { accepted: 0, cost: 0, refused: 0, lastUsed: null };
      row.accepted += r.accepted;
      row.cost += r.cost;
      row.refused += r.refused.api_key_scope_insufficient;
      const last = r.lastUsedAt?.getTime() ?? null;
      if (last !== null) row.lastUsed = Math.max(row.lastUsed ?? -Infinity, last);
      stored.set(id, row);
    }
    assert.ok(model.size > 1_000 && back > 10, `rows of several hours (${model.size}, ${back})`);
    assert.deepEqual(stored, model);
    assert.equal(usage.pendingRows, 0);
  });

  it("the timer flushes every flushIntervalMs once something is counted, and is idle otherwise", async () => {
    const { usage, writes } = fastRecorder();
    usage.accepted("k", "t", 1, T0);
    await new Promise((resolve) => setTimeout(resolve, 250));
    assert.equal(writes.length, 1, "flushed by the timer");
    await new Promise((resolve) => setTimeout(resolve, 150));
    assert.equal(writes.length, 1, "no empty flush");
    await usage.close();
  });

  it("counts after close() (requests still draining) are written by the timer, armed unref'd; another close() writes the rest", async () => {
    const { usage, writes } = fastRecorder();
    usage.accepted("k", "t", 1, T0);
    await usage.close();
    usage.accepted("k", "t", 1, T0 + 1);
    usage.refused("k", "t", "api_key_revoked", T0 + 2);
    await new Promise((resolve) => setTimeout(resolve, 250));
    assert.equal(usage.pendingRows, 0, "written by the timer");
    assert.deepEqual(rowsOf(writes).map((row) => [row.accepted, row.refused.api_key_revoked]), [
      [1, 0],
      [1, 1],
    ]);
    usage.accepted("k", "t", 1, T0 + 3);
    await usage.close();
    assert.equal(rowsOf(writes).length, 3);
  });
});

describe("UsageRecorder: a retried write is counted once", () => {
  /** The rows of each `recordUsage` call `lateFirstWrite` passed on, in order. */
  const calls: number[] = [];
  /**
   * `inner` whose first `recordUsage` commits `delayMs` late (`"never"`: never settles; the others
   * at once), without the `usageBatches` capability when `batches` is false.
   */
  function lateFirstWrite(inner: InMemoryApiKeyStorage, delayMs: number | "never", batches = true) {
    calls.length = 0;
    let late = true;
    return new Proxy(inner, {
      get(target, property, receiver) {
        if (property === "usageBatches") return batches;
        if (property !== "recordUsage") {
          const value = Reflect.get(target, property, receiver);
          return typeof value === "function" ? value.bind(target) : value;
        }
        return (...args: Parameters<InMemoryApiKeyStorage["recordUsage"]>) => {
          calls.push(args[0].length);
          const write = () => target.recordUsage(...args);
          if (!late) return write();
          late = false;
          if (delayMs === "never") return new Promise(() => {});
          return new Promise((resolve) => setTimeout(resolve, delayMs)).then(write);
        };
      },
    }) as ApiKeyStorage;
  }

  it("a write that commits after storageTimeoutMs is retried once it settled, never beside it (each retry would hold a connection waiting on it): the stored counts equal the recorded ones", async () => {
    const inner = new InMemoryApiKeyStorage();
    const access = new StorageAccess(lateFirstWrite(inner, 200), 50, "storage");
    const usage = recorder(access.usage!, { now: T0 });
    for (let i = 0; i < 10; i++) usage.accepted("k1", "t1", 1, T0);
    usage.refused("k1", "t1", "api_key_revoked", T0);
    const timedOut = await usage.flush();
    assert.ok(timedOut instanceof ApiKeyStorageError, String(timedOut));
    usage.accepted("k1", "t1", 1, T0);
    for (let i = 0; i < 3; i++) {
      const waiting = await usage.flush();
      assert.match(String(waiting), /usage write given up at its deadline has not settled/);
    }
    assert.deepEqual(calls, [1], "no write sent while the late one runs");
    usage.accepted("k1", "t1", 3, T0);
    await new Promise((resolve) => setTimeout(resolve, 300)); // the late write commits
    await usage.close();
    // Then the two batches taken since, in order (its own landed: not sent again).
    assert.deepEqual(calls, [1, 1, 1]);
    const hours = await inner.readUsage({
      tenantId: "t1",
      from: new Date(T0),
      to: new Date(T0 + HOUR),
    });
    assert.deepEqual(
      hours.map((h) => [h.accepted, h.cost, h.refused.api_key_revoked]),
      [[12, 14, 1]],
    );
  });
  /** The stored accepted count of k1's hour at `T0`. */
  const stored = async (inner: InMemoryApiKeyStorage) =>
    (await inner.readUsage({ tenantId: "t1", from: new Date(T0), to: new Date(T0 + HOUR) }))[0]
      ?.accepted;

  it("a write given up that never settles (its connection gone) is sent again after lateWriteWaitMs: recording resumes", async () => {
    const inner = new InMemoryApiKeyStorage();
    const access = new StorageAccess(lateFirstWrite(inner, "never"), 50, "storage");
    const usage = new UsageRecorder({
      access: access.usage!,
      clock: () => new Date(T0),
      flushIntervalMs: HOUR,
      maxPendingKeys: 100,
      emitMetric: undefined,
      lateWriteWaitMs: 200,
    });
    usage.accepted("k1", "t1", 1, T0);
    assert.ok(await usage.flush() instanceof ApiKeyStorageError);
    assert.match(String(await usage.flush()), /has not settled/);
    await new Promise((resolve) => setTimeout(resolve, 250));
    assert.equal(await usage.flush(), undefined, "sent again");
    assert.deepEqual([calls, await stored(inner)], [[1, 1], 1]);
    await usage.close();
  });

  it("close() just after a write was given up waits for it (at most storageTimeoutMs): one that lands is not sent again, even without usageBatches", async () => {
    for (const batches of [true, false]) {
      const inner = new InMemoryApiKeyStorage();
      const access = new StorageAccess(lateFirstWrite(inner, 120, batches), 100, "storage");
      const usage = recorder(access.usage!, { now: T0 });
      usage.accepted("k1", "t1", 1, T0);
      assert.ok(await usage.flush() instanceof ApiKeyStorageError, "given up at 100 ms");
      await usage.close(); // the write lands 20 ms later
      assert.deepEqual([calls, await stored(inner)], [[1], 1], `usageBatches: ${batches}`);
    }
  });
});

describe("compileUsage", () => {
  const { access } = fakeAccess();
  const clock = () => new Date(T0);
  it("is off when omitted or false, and builds a recorder for true or options", async () => {
    assert.equal(compileUsage(undefined, access, clock, "o.usage"), undefined);
    assert.equal(compileUsage(false, access, clock, "o.usage"), undefined);
    const on = compileUsage({ flushIntervalMs: 500, maxPendingKeys: 2 }, access, clock, "o.usage");
    assert.ok(on instanceof UsageRecorder);
    await on.close();
    assert.ok(compileUsage(true, access, clock, "o.usage") instanceof UsageRecorder);
  });

  it("throws a TypeError naming the option", () => {
    for (
      const [option, message] of [
        ["yes", /o\.usage must be true, false or/],
        [{ flushIntervalMs: 99 }, /o\.usage\.flushIntervalMs must be a whole number from 100/],
        [{ flushIntervalMs: 1.5e3 + 0.5 }, /flushIntervalMs/],
        [{ maxPendingKeys: 0 }, /o\.usage\.maxPendingKeys must be a whole number from 1/],
        [{ onMetric: 1 }, /o\.usage\.onMetric must be a function/],
      ] as const
    ) {
      assert.throws(() => compileUsage(option, access, clock, "o.usage"), {
        name: "TypeError",
        message,
      });
    }
    assert.throws(() => compileUsage(true, undefined, clock, "o.usage"), {
      name: "TypeError",
      message: /needs a storage with the capabilities recordUsage and readUsage/,
    });
  });
});

describe("readUsage", () => {
  const hour = (ms: number, accepted: number): ApiKeyUsageBucket => ({
    ...zeroCounts(),
    start: new Date(ms),
    accepted,
    cost: accepted,
  });
  const reads: ApiKeyUsageReadQuery[] = [];
  // 2029-12-31T23:00, 2030-01-01T10:00 and 13:00, 2030-01-02T00:00.
  const hours = [
    hour(T0 - 11 * HOUR, 1),
    hour(T0, 2),
    hour(T0 + 3 * HOUR, 3),
    hour(T0 + 14 * HOUR, 4),
  ];
  const keyReads: ApiKeyUsageKeysReadQuery[] = [];
  const access: UsageAccess = {
    timeoutMs: 5_000,
    record: () => Promise.resolve(),
    read: (query) => {
      reads.push(query);
      return Promise.resolve(hours);
    },
    readKeys: (query) => {
      keyReads.push(query);
      return Promise.resolve(query.keyIds.map((_, i) => i === 0 ? hours : []));
    },
  };

  it("readUsageOfKeys: one read of every key over the widened window, each list summed per day as readUsage sums", async () => {
    const from = new Date(T0 - 11 * HOUR + 1_234);
    const to = new Date(T0 + 15 * HOUR - 1);
    const query = { from, to, granularity: "day" as const };
    const lists = await readUsageOfKeys(access, "t1", ["k1", "k2"], query);
    assert.deepEqual(keyReads, [{
      tenantId: "t1",
      keyIds: ["k1", "k2"],
      from: new Date(Math.floor(from.getTime() / (24 * HOUR)) * 24 * HOUR),
      to: new Date(Math.ceil(to.getTime() / (24 * HOUR)) * 24 * HOUR),
      granularity: "day",
    }]);
    assert.deepEqual(lists, [await readUsage(access, "t1", query), []]);
    await assert.rejects(
      readUsageOfKeys(access, "t1", ["k1", ""], query),
      (e: Error) => e.name === "ApiKeyValidationError",
    );
    await assert.rejects(
      readUsageOfKeys(access, "t1", ["k1"], { ...query, to: from }),
      (e: Error) => e.name === "ApiKeyValidationError",
    );
  });

  it("reads hours from the hour of `from` to the end of the hour of `to`, and sums days (UTC)", async () => {
    const from = new Date(T0 - 11 * HOUR + 1_234);
    const to = new Date(T0 + 15 * HOUR - 1);
    assert.deepEqual(await readUsage(access, "t1", { from, to, granularity: "hour" }), hours);
    assert.deepEqual(reads.at(-1), {
      tenantId: "t1",
      from: new Date(T0 - 11 * HOUR),
      to: new Date(T0 + 15 * HOUR),
      granularity: "hour",
    });
    const days = await readUsage(access, "t1", { keyId: "k1", from, to, granularity: "day" });
    assert.deepEqual(reads.at(-1), {
      tenantId: "t1",
      keyId: "k1",
      from: new Date("2029-12-31T00:00:00.000Z"),
      to: new Date("2030-01-03T00:00:00.000Z"),
      granularity: "day",
    });
    // A storage answering days for a day read (as the Prisma adapter does): the same answer.
    reads.length = 0;
    const perDay = await readUsage(
      { ...access, read: () => Promise.resolve(days) },
      "t1",
      { keyId: "k1", from, to, granularity: "day" },
    );
    assert.deepEqual(perDay, days);
    assert.deepEqual(days.map((d) => [d.start.toISOString(), d.accepted, d.cost]), [
      ["2029-12-31T00:00:00.000Z", 1, 1],
      ["2030-01-01T00:00:00.000Z", 5, 5],
      ["2030-01-02T00:00:00.000Z", 4, 4],
    ]);
  });

  it("refuses a bad query with api_key_invalid_input naming the field, before reading", async () => {
    const count = reads.length;
    const from = new Date(T0);
    for (
      const [tenantId, query, field] of [
        ["", { from, to: new Date(T0 + HOUR), granularity: "hour" }, "tenantId"],
        ["t\u0000", { from, to: new Date(T0 + HOUR), granularity: "hour" }, "tenantId"],
        ["t\ud800", { from, to: new Date(T0 + HOUR), granularity: "hour" }, "tenantId"],
        ["t", { keyId: " ", from, to: new Date(T0 + HOUR), granularity: "hour" }, "keyId"],
        ["t", { from, to: new Date(T0 + HOUR), granularity: "week" }, "granularity"],
        ["t", { from: new Date(NaN), to: new Date(T0), granularity: "hour" }, "from"],
        ["t", { from, to: "tomorrow", granularity: "hour" }, "to"],
        ["t", { from, to: from, granularity: "hour" }, "to"],
        ["t", { from, to: new Date(T0 + 745 * HOUR + 1), granularity: "hour" }, "to"],
        ["t", { from, to: new Date(T0 + 367 * 24 * HOUR), granularity: "day" }, "to"],
        ["t", { from: new Date(-HOUR), to: from, granularity: "day" }, "from"],
      ] as const
    ) {
      // deno-lint-ignore no-explicit-any
      await assert.rejects(readUsage(access, tenantId, query as any), {
        code: "api_key_invalid_input",
        field,
      });
    }
    assert.equal(reads.length, count);
    await assert.rejects(
      readUsage(undefined, "t", { from, to: new Date(T0 + HOUR), granularity: "hour" }),
      { name: "TypeError", message: /needs a storage with the capabilities/ },
    );
  });
});

describe("ApiKeysService with the usage option", () => {
  const DAY = 24 * HOUR;

  /** A service counting usage over a spied in-memory storage, and its keys. */
  async function fixture() {
    const spied = spyStorage(new InMemoryApiKeyStorage());
    const made = makeService({ storage: spied.storage, usage: { flushIntervalMs: HOUR } });
    const { service, clocks } = made;
    const create = (tenantId: string, more: Record<string, unknown> = {}) =>
      service.create({ tenantId, name: "k", scopes: READ_ORDERS, ...more });
    const good = await create("t1", { allowedIpCidrs: ["10.0.0.0/8"] });
    const revoked = await create("t1");
    await service.revoke(revoked.id);
    const expiring = await create("t1", { expiresAt: new Date(clocks.now + 1_000) });
    const foreign = await create("t2");
    // A stored prefix holding another secret: `impostor` verifies with a wrong secret.
    const impostor = generateKey({ environment: "live" });
    const stored = (await spied.storage.findById(good.id))!;
    await spied.storage.insert({ ...stored, id: "impostor", prefix: impostor.prefix });
    clocks.advance(2_000);
    return { ...made, spied, good, revoked, expiring, foreign, impostor };
  }

  it("100,000 verifications: after close() the stored counts equal the outcomes per key and code, with no write on the request path", async () => {
    const f = await fixture();
    const { service, clocks } = f;
    const unknown = generateKey({ environment: "live" }).raw;
    const expected = new Map<string, number>();
    const bump = (label: string) => expected.set(label, (expected.get(label) ?? 0) + 1);
    const calls = f.spied.calls.length;
    const inside = { clientIp: "10.1.2.3" };
    for (let i = 0; i < 100_000; i++) {
      if (i % 25_000 === 0) clocks.advance(HOUR); // four hours
      switch (i % 10) {
        case 0:
        case 1:
        case 2:
          await service.verify(f.good.key);
          bump("good accepted");
          break;
        case 3:
          await service.authorize(f.good.key, { ...inside, requiredScope: READ_ORDERS[0] });
          bump("good accepted");
          break;
        case 4:
          await assert.rejects(service.authorize(f.good.key, {
            ...inside,
            requiredScope: { resource: "orders", level: "write" },
          }));
          bump("good api_key_scope_insufficient");
          break;
        case 5:
          await assert.rejects(service.authorize(f.good.key, { clientIp: "192.0.2.1" }));
          bump("good api_key_ip_not_allowed");
          break;
        case 6:
          await assert.rejects(service.authorize(f.good.key, {
            ...inside,
            requiredEnvironment: "test",
          }));
          bump("good api_key_environment_mismatch");
          break;
        case 7:
          await assert.rejects(service.verify(f.revoked.key));
          bump("revoked api_key_revoked");
          await assert.rejects(service.verify(f.expiring.key));
          bump("expiring api_key_expired");
          break;
        case 8:
          await assert.rejects(service.verify(f.impostor.raw));
          bump("impostor api_key_invalid");
          await assert.rejects(service.verify(unknown)); // never counted
          break;
        default:
          await service.verify(f.foreign.key);
          bump("foreign accepted");
      }
    }
    const writes = f.spied.calls.slice(calls).filter((c) =>
      c === "recordUsage" || c === "touchLastUsed"
    );
    assert.deepEqual(writes, [], "no write while verifying (the flush interval is an hour)");
    await service.close();
    const actual = new Map<string, number>();
    const window = { from: new Date(clocks.now - 2 * DAY), to: new Date(clocks.now + HOUR) };
    for (
      const [tenantId, keyId, label] of [
        ["t1", f.good.id, "good"],
        ["t1", f.revoked.id, "revoked"],
        ["t1", f.expiring.id, "expiring"],
        ["t1", "impostor", "impostor"],
        ["t2", f.foreign.id, "foreign"],
      ]
    ) {
      const hours = await service.usage(tenantId, { keyId, ...window, granularity: "hour" });
      assert.equal(hours.length, 4, `${label}: four hours`);
      for (const hour of hours) {
        if (hour.accepted > 0) {
          actual.set(`${label} accepted`, (actual.get(`${label} accepted`) ?? 0) + hour.accepted);
        }
        for (const [code, n] of Object.entries(hour.refused)) {
          if (n > 0) actual.set(`${label} ${code}`, (actual.get(`${label} ${code}`) ?? 0) + n);
        }
      }
    }
    assert.deepEqual(new Map([...actual].sort()), new Map([...expected].sort()));
    const [day] = await service.usage("t1", { ...window, granularity: "day" });
    assert.equal(day.accepted, expected.get("good accepted"), "a tenant's day sums its keys");
    assert.equal(day.cost, expected.get("good accepted"), "cost 1 per accepted request");
    assert.deepEqual(
      await service.usage("t2", { keyId: f.good.id, ...window, granularity: "day" }),
      [],
      "another tenant's key reads as none",
    );
    const summaries = await service.listSummaries("t1");
    const good = summaries.find((s) => s.id === f.good.id)!;
    assert.ok(
      good.lastUsedAt !== null && good.lastUsedAt.getTime() > clocks.now - HOUR,
      "lastUsedAt from the flush",
    );
    assert.equal(summaries.find((s) => s.id === f.expiring.id)?.lastUsedAt, null);
    const flushes = f.spied.calls.slice(calls).filter((c) => c === "recordUsage");
    assert.equal(flushes.length, 1, "one write: 5 keys × 4 hours = 20 rows");
  });

  it("with a limiter: a denial counts as api_key_rate_limited in the key's hour; accepted requests add their cost (default 1)", async () => {
    const limiter = createRateLimiter({ store: createMemoryRateLimitStore(), logger: () => {} });
    const { service, clocks } = makeService({ usage: { flushIntervalMs: HOUR }, limiter });
    const key = await service.create({
      tenantId: "t1",
      name: "k",
      scopes: READ_ORDERS,
      rateLimits: [{ name: "api", limit: 5, windowMs: HOUR }],
    });
    await service.authorize(key.key);
    await service.authorize(key.key, { cost: 3 });
    await service.authorize(key.key, { cost: 0 });
    for (let i = 0; i < 2; i++) {
      await assert.rejects(service.authorize(key.key, { cost: 2 }), {
        code: "api_key_rate_limited",
      });
    }
    await assert.rejects(service.authorize(key.key, { cost: -1 }), TypeError);
    await service.close();
    const window = { from: new Date(clocks.now - HOUR), to: new Date(clocks.now + HOUR) };
    const [hour] = await service.usage("t1", { keyId: key.id, ...window, granularity: "hour" });
    assert.equal(hour.accepted, 3);
    assert.equal(hour.cost, 4);
    assert.equal(hour.refused.api_key_rate_limited, 2);
  });

  it("without a limiter the cost still counts, and a bad cost is refused before verifying", async () => {
    const { service, clocks, metrics } = makeService({ usage: { flushIntervalMs: HOUR } });
    const key = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
    await service.authorize(key.key, { cost: 7 });
    const verified = metrics.length;
    await assert.rejects(service.authorize(key.key, { cost: 1.5 }), {
      name: "TypeError",
      message: /AuthorizeOptions\.cost/,
    });
    assert.equal(metrics.length, verified, "no verification for a bad cost");
    await service.close();
    const window = { from: new Date(clocks.now - HOUR), to: new Date(clocks.now + HOUR) };
    const [hour] = await service.usage("t1", { ...window, granularity: "hour" });
    assert.deepEqual([hour.accepted, hour.cost], [1, 7]);
  });

  it("every request counts at its one clock read: an injected clock stepping an hour at each read is read once per request (verify, authorize, cache hit and miss, first use, each refusal), and its count lands in that hour", async () => {
    const { clock, state } = steppingClock();
    const reads = state.reads;
    const limiter = createRateLimiter({ store: createMemoryRateLimitStore(), logger: () => {} });
    // No event sink: events read the clock for their own `at`.
    const { service, storage } = makeService({
      clock,
      onEvent: undefined,
      usage: { flushIntervalMs: HOUR },
      limiter,
    });
    const { names, create } = keyMaker(service);
    const lasting = { expiresAt: new Date(T0 + 1_000 * 24 * HOUR) };
    const plain = await create("plain");
    const dated = await create("dated", lasting);
    const unusedHit = await create("unused", lasting);
    const unusedScope = await create("unused-scope", lasting);
    const limited = await create("limited", {
      ...lasting,
      rateLimits: [{ name: "api", limit: 1, windowMs: HOUR }],
    });
    const expiring = await create("expiring", { expiresAt: new Date(T0 + HOUR / 2) });
    const revoked = await create("revoked", lasting);
    await service.revoke([...names].find(([, name]) => name === "revoked")![0]);
    const impostor = generateKey({ environment: "live" });
    const stored = (await storage.findById([...names].find(([, name]) => name === "dated")![0]))!;
    await storage.insert({ ...stored, id: "impostor", prefix: impostor.prefix });
    names.set("impostor", "impostor");
    state.now = T0 + HOUR;
    state.stepping = true;
    const write = { requiredScope: { resource: "orders", level: "write" as const } };
    const cases: [string, () => Promise<unknown>, string | null][] = [
      ["verify, miss", () => service.verify(plain), "plain accepted"],
      ["verify, hit", () => service.verify(plain), "plain accepted"],
      ["verify with expiry, miss", () => service.verify(dated), "dated accepted"],
      ["verify with expiry, hit", () => service.verify(dated), "dated accepted"],
      ["authorize, hit", () => service.authorize(plain), "plain accepted"],
      ["authorize with expiry, hit", () => service.authorize(dated), "dated accepted"],
      ["authorize, miss, first use", () => service.authorize(unusedHit), "unused accepted"],
      [
        "authorize with expiry, scope refused, hit",
        () => service.authorize(dated, write),
        "dated api_key_scope_insufficient",
      ],
      [
        "authorize with expiry, scope refused, miss",
        () => service.authorize(unusedScope, write),
        "unused-scope api_key_scope_insufficient",
      ],
      [
        "authorize, environment refused",
        () => service.authorize(plain, { requiredEnvironment: "test" }),
        "plain api_key_environment_mismatch",
      ],
      ["authorize with a limit, miss", () => service.authorize(limited), "limited accepted"],
      [
        "authorize with a limit, refused",
        () => service.authorize(limited),
        "limited api_key_rate_limited",
      ],
      ["verify expired, miss", () => service.verify(expiring), "expiring api_key_expired"],
      ["verify expired, hit", () => service.verify(expiring), "expiring api_key_expired"],
      ["authorize expired", () => service.authorize(expiring), "expiring api_key_expired"],
      ["verify revoked, miss", () => service.verify(revoked), "revoked api_key_revoked"],
      ["verify revoked, hit", () => service.verify(revoked), "revoked api_key_revoked"],
      ["authorize revoked", () => service.authorize(revoked), "revoked api_key_revoked"],
      ["verify, wrong secret", () => service.verify(impostor.raw), "impostor api_key_invalid"],
      [
        "verify, unknown prefix",
        () => service.verify(generateKey({ environment: "live" }).raw),
        null,
      ],
    ];
    const expected = new Map<string, number>();
    const readsOf: string[] = [];
    for (const [label, run, counted] of cases) {
      const before = reads.length;
      await run().catch(() => {});
      const during = reads.slice(before);
      readsOf.push(`${label}: ${during.length}`);
      if (counted !== null) expected.set(`${new Date(during[0]).toISOString()} ${counted}`, 1);
    }
    // One read per request: counted (the unknown prefix costs what a stored key does).
    assert.deepEqual(readsOf, cases.map(([label]) => `${label}: 1`));
    state.stepping = false;
    await service.close();
    const actual = new Map<string, number>();
    const window = { from: new Date(T0), to: new Date(state.now), granularity: "hour" as const };
    for (const [keyId, name] of names) {
      for (const hour of await service.usage("t1", { keyId, ...window })) {
        const counts = { accepted: hour.accepted, ...hour.refused };
        for (const [outcome, n] of Object.entries(counts)) {
          if (n > 0) actual.set(`${hour.start.toISOString()} ${name} ${outcome}`, n);
        }
      }
    }
    assert.deepEqual(new Map([...actual].sort()), new Map([...expected].sort()));
  });

  it("a request's events are at its one time: with an event sink, an injected clock stepping an hour at each read is read once per request, and every event of it (auth_failed, authorization_denied, credits_low, credits_exhausted, used) is at the hour its usage counts in", async () => {
    const { clock, state } = steppingClock();
    const reads = state.reads;
    const events: ApiKeyEvent[] = [];
    // The limiter's own clock does not step (the service's is the one counted).
    const limiter = createRateLimiter({
      store: createMemoryRateLimitStore({ now: () => state.now }),
      logger: () => {},
    });
    const storage = new CreditedStorage();
    const { service } = makeService({
      clock,
      storage,
      onEvent: (event) => void events.push(event),
      emitUsageEvents: true,
      creditThresholds: [2],
      usage: { flushIntervalMs: HOUR },
      limiter,
    });
    const { names, create } = keyMaker(service);
    const lasting = { expiresAt: new Date(T0 + 1_000 * 24 * HOUR) };
    const plain = await create("plain");
    const dated = await create("dated", lasting);
    const unused = await create("unused", lasting);
    const limited = await create("limited", {
      rateLimits: [{ name: "api", limit: 1, windowMs: HOUR }],
    });
    storage.next = { remaining: 3, updatedAt: new Date(T0) };
    const credited = await create("credited");
    const expiring = await create("expiring", { expiresAt: new Date(T0 + HOUR / 2) });
    const revoked = await create("revoked", lasting);
    await service.revoke([...names].find(([, name]) => name === "revoked")![0]);
    const impostor = generateKey({ environment: "live" });
    const stored = (await storage.findById([...names].find(([, name]) => name === "plain")![0]))!;
    await storage.insert({ ...stored, id: "impostor", prefix: impostor.prefix });
    names.set("impostor", "impostor");
    const unknown = generateKey({ environment: "live" }).raw;
    state.now = T0 + HOUR;
    state.stepping = true;
    events.length = 0;
    const write = { requiredScope: { resource: "orders", level: "write" as const } };
    const twoKeys = (name: string) => name === "x-api-key" ? [plain, dated] : undefined;
    const cases: [string, () => Promise<unknown>, string][] = [
      ["verify, miss", () => service.verify(plain), "used"],
      ["verify expired", () => service.verify(expiring), "auth_failed"],
      ["verify, wrong secret", () => service.verify(impostor.raw), "auth_failed"],
      ["authorize, no key", () => service.authorize(undefined), "auth_failed denied"],
      [
        "authorizeRequest, two keys",
        () => service.authorizeRequest(twoKeys),
        "auth_failed denied",
      ],
      ["authorize, malformed", () => service.authorize("nope"), "auth_failed denied"],
      ["authorize, unknown prefix", () => service.authorize(unknown), "auth_failed denied"],
      ["authorize, wrong secret", () => service.authorize(impostor.raw), "auth_failed denied"],
      ["authorize revoked, miss", () => service.authorize(revoked), "auth_failed denied"],
      ["authorize revoked, hit", () => service.authorize(revoked), "auth_failed denied"],
      ["authorize expired, hit", () => service.authorize(expiring), "auth_failed denied"],
      ["authorize, hit", () => service.authorize(plain), "used"],
      ["authorize, first use", () => service.authorize(unused), "used"],
      [
        "authorize with expiry, scope refused",
        () => service.authorize(dated, write),
        "auth_failed denied",
      ],
      [
        "authorize, environment refused",
        () => service.authorize(plain, { requiredEnvironment: "test" }),
        "auth_failed denied",
      ],
      ["authorize with a limit", () => service.authorize(limited), "used"],
      ["authorize with a limit, refused", () => service.authorize(limited), "denied"],
      ["authorize, credits to 2", () => service.authorize(credited), "credits_low used"],
      [
        "authorize, credits to 0",
        () => service.authorize(credited, { cost: 2 }),
        "credits_exhausted used",
      ],
      ["authorize, credits refused", () => service.authorize(credited), "denied"],
    ];
    const seen: string[] = [];
    const expected: string[] = [];
    for (const [label, run, kinds] of cases) {
      const before = reads.length;
      const first = events.length;
      await run().catch(() => {});
      const during = reads.slice(before);
      const at = new Date(during[0]).toISOString();
      const mine = events.slice(first).map((e) => `${e.type.slice(8)} ${e.at.toISOString()}`);
      seen.push(`${label}: ${during.length} read(s); ${mine.join(", ")}`);
      expected.push(
        `${label}: 1 read(s); ${
          kinds.split(" ").map((kind) => `${kind.replace("denied", "authorization_denied")} ${at}`)
            .join(", ")
        }`,
      );
    }
    assert.deepEqual(seen, expected);
    state.stepping = false;
    // Each counted request lands in the hour of its one read, its events' hour.
    const hours = new Set<string>();
    const window = { from: new Date(T0), to: new Date(state.now), granularity: "hour" as const };
    for (const [keyId] of names) {
      for (const hour of await service.usage("t1", { keyId, ...window })) {
        hours.add(hour.start.toISOString());
      }
    }
    const eventHours = new Set(events.map((e) => e.at.toISOString()));
    for (const hour of hours) assert.ok(eventHours.has(hour), `usage at ${hour} has its events`);
    await service.close();
  });

  it("a later check refusing a charged request whose accepted count is already written counts nothing more: the request stays counted once, accepted", async () => {
    const { service, clocks } = makeService({ usage: { flushIntervalMs: HOUR } });
    const { id, key } = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
    const request = {};
    await service.authorize(key, { request, cost: 2 });
    await service.close(); // the accepted count is written
    const write = { resource: "orders", level: "write" } as const;
    await assert.rejects(service.authorize(key, { request, cost: 2, requiredScope: write }), {
      code: "api_key_scope_insufficient",
    });
    await service.close();
    const [hour] = await service.usage("t1", {
      keyId: id,
      from: new Date(clocks.now),
      to: new Date(clocks.now + HOUR),
      granularity: "hour",
    });
    assert.deepEqual([hour.accepted, hour.cost, hour.refused.api_key_scope_insufficient], [
      1,
      2,
      0,
    ]);
  });

  it("a later check refusing a charged request takes its time back from lastUsedAt: the key's lastUsedAt is its latest accepted request's, as before the refused one", async () => {
    const write = { resource: "orders", level: "write" } as const;
    /**
     * Runs `steps` on one key in one hour: `+` a minute passes, `a` a request accepted, `b` or
     * `c` the first (accepted) check of a request, `-b` or `-c` its later check, refused. Answers
     * the stored `lastUsedAt` after `close()`, in minutes from the start (`null`: none).
     */
    const lastUsedAfter = async (...steps: string[]) => {
      const { service, storage, clocks } = makeService({ usage: { flushIntervalMs: HOUR } });
      const start = clocks.now;
      const { id, key } = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
      const requests: Record<string, object> = { b: {}, c: {} };
      for (const step of steps) {
        if (step === "+") clocks.advance(60_000);
        else if (step === "a") await service.authorize(key);
        else if (step in requests) await service.authorize(key, { request: requests[step] });
        else {
          const request = requests[step.slice(1)];
          await assert.rejects(service.authorize(key, { request, requiredScope: write }), {
            code: "api_key_scope_insufficient",
          });
        }
      }
      await service.close();
      const at = (await storage.findById(id))!.lastUsedAt;
      return at === null ? null : (at.getTime() - start) / 60_000;
    };
    assert.equal(await lastUsedAfter("+", "a", "+", "b", "-b"), 1, "the accepted one's time");
    assert.equal(await lastUsedAfter("+", "b", "-b"), null, "no accepted request");
    assert.equal(await lastUsedAfter("+", "a", "+", "b", "+", "a", "-b"), 3, "a later one's");
    assert.equal(await lastUsedAfter("+", "b", "a", "-b"), 1, "one accepted at the same time");
    assert.equal(await lastUsedAfter("+", "a", "b", "-b"), 1, "one accepted at the same time");
    assert.equal(await lastUsedAfter("+", "a", "+", "b", "+", "c", "-c", "-b"), 1, "two refused");
  });

  it("close() resolves at once without the option; the option needs the capability", async () => {
    const { service } = makeService();
    await service.close();
    const bare = overrideStorage(new InMemoryApiKeyStorage(), {});
    assert.throws(() => makeService({ storage: bare, usage: true }), {
      name: "TypeError",
      message: /ApiKeysServiceOptions\.usage needs a storage with the capabilities recordUsage/,
    });
    await assert.rejects(
      makeService({ storage: bare }).service.usage("t", {
        from: new Date(T0),
        to: new Date(T0 + HOUR),
        granularity: "hour",
      }),
      TypeError,
    );
  });
});

describe("UsageRecorder's refusal aggregates (audit.refusedVerifications)", () => {
  it("hands over one aggregate per key and past hour, from the rows written, by code; none with no refusal", async () => {
    const clock = { now: T0 };
    const { access } = fakeAccess((call) => call === 3);
    const seen: [string, string, string, Record<string, number>][] = [];
    const usage = new UsageRecorder({
      access,
      clock: () => new Date(clock.now),
      flushIntervalMs: HOUR,
      maxPendingKeys: 100,
      emitMetric: undefined,
      onRefusals: (keyId, tenantId, hour, refused) =>
        seen.push([keyId, tenantId, hour.toISOString(), refused]),
    });
    usage.refused("k1", "t1", "api_key_revoked", clock.now);
    usage.refused("k1", "t1", "api_key_revoked", clock.now);
    usage.accepted("k2", "t1", 1, clock.now);
    await usage.flush();
    clock.now = T0 + 60_000;
    usage.refused("k1", "t1", "api_key_ip_not_allowed", clock.now);
    await usage.flush();
    assert.deepEqual(seen, [], "the hour is not past: nothing yet, whatever the flushes");
    clock.now = T0 + HOUR;
    usage.refused("k1", "t1", "api_key_expired", clock.now);
    assert.notEqual(await usage.flush(), undefined, "the third write fails");
    assert.deepEqual(seen, [], "a failed write reports nothing");
    await usage.flush();
    assert.deepEqual(seen, [
      ["k1", "t1", new Date(T0).toISOString(), { api_key_revoked: 2, api_key_ip_not_allowed: 1 }],
    ]);
    await usage.close();
    assert.deepEqual(seen.at(-1), [
      "k1",
      "t1",
      new Date(T0 + HOUR).toISOString(),
      { api_key_expired: 1 },
    ]);
    assert.equal(seen.length, 2);
  });

  it("one record per key, hour and instance: an hour is reported only once no count of it can still arrive (storageTimeoutMs plus the limiter's timeoutMs after it), so a count timestamped before a slow limiter check joins its hour's record", async () => {
    const memory = createMemoryRateLimitStore();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => release = resolve);
    let holding = false;
    // A store answering asynchronously (as Redis or PostgreSQL do), held on demand.
    const slow = {
      name: "slow",
      checkBatch: async (checks: Parameters<typeof memory.checkBatch>[0]) => {
        if (holding) await gate;
        return memory.checkBatch(checks);
      },
    };
    const clock = { now: Date.parse("2030-01-01T10:59:59.000Z") };
    const { service } = makeService({
      clock: () => new Date(clock.now),
      limiter: createRateLimiter({ store: slow as never, logger: () => {}, timeoutMs: 30_000 }),
      storageTimeoutMs: 1_000,
      usage: { flushIntervalMs: 100 },
      audit: { checkpointKey: "k".repeat(40), refusedVerifications: true },
    });
    const { key } = await service.create({
      tenantId: "t1",
      name: "k",
      scopes: READ_ORDERS,
      rateLimits: [{ name: "api", limit: 1, windowMs: HOUR }],
      expiresAt: new Date("2031-01-01T00:00:00Z"), // its expiry check reads the request's time
    });
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const records = async () =>
      (await service.auditLog("t1", { action: "key.verifications_refused" as never })).records;
    await service.authorize(key); // accepted at 10:59:59: the limit of 1 is spent
    const write = { resource: "orders", level: "write" } as const;
    await assert.rejects(service.authorize(key, { requiredScope: write }), {
      code: "api_key_scope_insufficient",
    });
    holding = true;
    const late = service.authorize(key).catch((error) => error.code); // at 10:59:59, held
    clock.now = Date.parse("2030-01-01T11:00:00.100Z");
    await pause(300); // flushes: hour 10 is over, but a count of it may still come
    release();
    assert.equal(await late, "api_key_rate_limited");
    clock.now = Date.parse("2030-01-01T11:00:30.900Z"); // 11:00 + 1 s + 30 s not reached
    await pause(300);
    assert.equal((await records()).length, 0, "not reported within the grace");
    clock.now = Date.parse("2030-01-01T11:00:31.100Z");
    await pause(300);
    const written = await records(); // handed over by a flush, not by close()
    await service.close();
    assert.equal(written.length, 1, "one record for the key's hour 10");
    assert.deepEqual(written[0].changes.refused.after, {
      api_key_scope_insufficient: 1,
      api_key_rate_limited: 1,
    });
  });

  it("a clock that throws while the flush timer runs: no unhandled rejection, the failed flush reported as a write's, the counts and the hour's refusals written once when it recovers", async () => {
    const unhandled = collectUnhandledRejections();
    try {
      const clock = { now: T0, broken: false };
      const usageMetrics: ApiKeyUsageMetric[] = [];
      const { service } = makeService({
        clock: () => {
          if (clock.broken) throw new Error("time source unavailable");
          return new Date(clock.now);
        },
        usage: { flushIntervalMs: 100, onMetric: (metric) => void usageMetrics.push(metric) },
        audit: { checkpointKey: "k".repeat(40), refusedVerifications: true },
      });
      const { id, key } = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
      await service.revoke(id);
      await assert.rejects(service.verify(key), { code: "api_key_revoked" });
      clock.broken = true;
      const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
      await pause(350); // flushes with the clock throwing
      assert.deepEqual(unhandled.reasons, [], "no flush rejects unhandled");
      assert.ok(usageMetrics.some((m) => m.outcome === "failed" && m.rows === 1));
      clock.broken = false;
      clock.now = T0 + 2 * HOUR; // hour 10 is past
      await pause(350);
      const [bucket] = await service.usage("t1", {
        keyId: id,
        granularity: "hour",
        from: new Date(T0),
        to: new Date(T0 + HOUR),
      });
      assert.equal(bucket?.refused.api_key_revoked, 1);
      const records =
        (await service.auditLog("t1", { action: "key.verifications_refused" as never })).records;
      await service.close();
      assert.equal(records.length, 1, "one record for the hour");
      assert.deepEqual(records[0].changes.refused.after, { api_key_revoked: 1 });
    } finally {
      await unhandled.stop();
    }
    assert.deepEqual(unhandled.reasons, []);
  });

  it("a refusal sink (or the clock read before it) that throws: the flush resolves its error, the hours not handed over are kept for the next flush, each reported once", async () => {
    const clock = { now: T0, broken: false };
    const { access } = fakeAccess();
    const seen: [string, string][] = [];
    let sinkCalls = 0;
    let throwAt = 0; // the sink call that throws
    const usage = new UsageRecorder({
      access,
      clock: () => {
        if (clock.broken) throw new TypeError("clock must answer a valid Date");
        return new Date(clock.now);
      },
      flushIntervalMs: HOUR,
      maxPendingKeys: 100,
      emitMetric: undefined,
      onRefusals: (keyId, _tenantId, hour) => {
        if (++sinkCalls === throwAt) throw new TypeError("clock must answer a valid Date");
        seen.push([keyId, hour.toISOString()]);
      },
    });
    usage.refused("k1", "t1", "api_key_revoked", clock.now);
    usage.refused("k2", "t1", "api_key_revoked", clock.now);
    clock.now = T0 + 2 * HOUR;
    clock.broken = true;
    assert.ok(await usage.flush() instanceof TypeError, "the clock's error, resolved");
    assert.equal(usage.pendingRows, 2, "nothing taken: the rows are kept");
    clock.broken = false;
    throwAt = 2;
    assert.ok(await usage.flush() instanceof TypeError, "the sink's error, resolved");
    assert.equal(usage.pendingRows, 0, "the rows are written");
    assert.equal(seen.length, 1, "the hour handed over before the failure stays reported");
    assert.equal(await usage.flush(), undefined);
    assert.deepEqual(seen.map(([keyId]) => keyId).sort(), ["k1", "k2"], "each hour once");
    await usage.close();
    assert.equal(seen.length, 2);
  });

  it("is opt-in: the verify path's counting is the same code either way, and the option needs usage", () => {
    // Structural: the counting called on each verification never looks at the aggregates.
    for (const method of [UsageRecorder.prototype.refused, UsageRecorder.prototype.accepted]) {
      assert.doesNotMatch(method.toString(), /onRefusals|refusals/i);
    }
    // The source is read where it exists (not in the npm build's test tree).
    const source = new URL("../../../api_keys/verify/_verify.ts", import.meta.url);
    if (existsSync(source)) {
      assert.doesNotMatch(readFileSync(source, "utf8"), /audit|onRefusals/i);
    }
    assert.throws(
      () => compileUsage(undefined, undefined, () => new Date(), "options.usage", {}, () => {}),
      /refusedVerifications needs options.usage/,
    );
  });
});
