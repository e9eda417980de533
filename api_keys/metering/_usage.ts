/**
 * The usage recorder of `ApiKeysService` (option `usage`): counts per key and
 * UTC hour kept in memory (a count at its request's start: a late one joins
 * its own hour's row), O(1) per verification, written every
 * `flushIntervalMs` as one row per (key, hour) that adds to the stored
 * counts, 1,000 rows per storage call, `lastUsedAt` with them. Each write is
 * a batch with an id; a failed write is retried as it was (same rows, same
 * id) before the next ones, so a storage with `usageBatches` counts a write
 * that committed after its deadline once. At most `maxPendingKeys` rows waiting
 * (the oldest dropped first, with a metric), besides a flush's rows being written. Also `ApiKeysService.usage`.
 *
 * @module
 */
import type { ApiKeyTaps } from "../../telemetry/_taps.ts";
import { errorNameOf } from "../../telemetry/_error_name.ts";
import type { Late, UsageAccess } from "../storage/_access.ts";
import { fail, requireNonEmptyString, requireTenantId } from "../_input.ts";
import { createDispatcher, type Dispatch, type Redact, warnOnce } from "../_sinks.ts";
import { unref } from "../_unref.ts";
import { usageOptions } from "../_options.ts";
import { checkUsageWindow } from "./_usage_window.ts";
import { addCounts, plus, zeroCounts } from "./_usage_counts.ts";
import {
  API_KEY_USAGE_REFUSALS,
  type ApiKeyUsageBucket,
  type ApiKeyUsageMetric,
  type ApiKeyUsageQuery,
  type ApiKeyUsageRefusalCode,
  type ApiKeyUsageRow,
} from "./usage.ts";

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
/** Rows per `recordUsage` call (one statement in the Prisma adapter). */
export const USAGE_ROWS_PER_WRITE = 1_000;

const REFUSAL_INDEX: Readonly<Record<string, number>> = Object.freeze(
  Object.fromEntries(API_KEY_USAGE_REFUSALS.map((code, i) => [code, i])),
);

/** `Pending.lastUsed` of a row with no accepted request (every offset in an hour is above it). */
const NEVER_USED = -HOUR_MS;
/** Most distinct times of accepted requests that may be taken back one row keeps (`Pending.open`). */
export const OPEN_TIMES = 8;

/** Counts of one key in one hour, not yet stored. */
class Pending {
  accepted = 0;
  cost = 0;
  /**
   * The last accepted request never taken back, in ms from `bucketMs` (a small integer, kept in
   * the object: a timestamp would be a boxed number, one more memory read per request).
   */
  lastUsed = NEVER_USED;
  /**
   * The accepted requests a later check may take back (`refusedInstead`): their latest
   * `OPEN_TIMES` distinct times (offsets as `lastUsed`), ascending, each followed by its count
   * (at most the requests of that time still accepted). An earlier time is not kept: it may be
   * missing from `lastUsedAt`, which is never a refused request's time.
   */
  open: number[] | undefined;
  readonly refused: number[] = new Array(API_KEY_USAGE_REFUSALS.length).fill(0);
  constructor(readonly keyId: string, readonly tenantId: string, readonly bucketMs: number) {}

  /** Keeps an accepted request at `offset` that may be taken back (see `open`). */
  keep(offset: number): void {
    const open = this.open ??= [];
    const i = this.#after(offset);
    if (open[i - 2] === offset) open[i - 1]++;
    else if (open.length < 2 * OPEN_TIMES) open.splice(i, 0, offset, 1);
    else if (i > 0) { // the earliest time kept leaves
      open.splice(i, 0, offset, 1);
      open.splice(0, 2);
    }
  }

  /** Takes back an accepted request at `offset` that `keep` kept (nothing when it was not kept). */
  release(offset: number): void {
    const i = this.#after(offset);
    if (this.open?.[i - 2] === offset && --this.open[i - 1] === 0) this.open.splice(i - 2, 2);
  }

  /** Where in `open` the times after `offset` start (searched from the latest). */
  #after(offset: number): number {
    const open = this.open ?? [];
    let i = open.length;
    while (i > 0 && open[i - 2] > offset) i -= 2;
    return i;
  }

  toRow(): ApiKeyUsageRow {
    const lastUsed = Math.max(this.lastUsed, this.open?.at(-2) ?? NEVER_USED);
    const row: ApiKeyUsageRow = {
      ...zeroCounts(),
      keyId: this.keyId,
      tenantId: this.tenantId,
      bucket: new Date(this.bucketMs),
      accepted: this.accepted,
      cost: this.cost,
      lastUsedAt: lastUsed === NEVER_USED ? null : new Date(this.bucketMs + lastUsed),
    };
    API_KEY_USAGE_REFUSALS.forEach((code, i) => row.refused[code] = this.refused[i]);
    return row;
  }
}

/** The row an accepted count is in, for `UsageRecorder.refusedInstead` (opaque to callers). */
export type CountedRow = Pending;

/** The rows of one UTC hour waiting for a flush, by key (oldest key first). */
interface Hour {
  readonly bucketMs: number;
  readonly rows: Map<string, Pending>;
}

/** A write: its rows, and its id, kept while it is retried. */
interface Batch {
  readonly id: string;
  readonly rows: Pending[];
}

/** Settings of a recorder. */
export interface UsageRecorderSettings {
  /** The storage's usage capability. */
  access: UsageAccess;
  /** Wall clock: which gathered hours of `onRefusals` are past (counts are at the time handed). */
  clock: () => Date;
  /** Interval between flushes, in ms. */
  flushIntervalMs: number;
  /** Most (key, hour) rows held. */
  maxPendingKeys: number;
  /** The `usage.onMetric` sink, contained. */
  emitMetric: Dispatch<ApiKeyUsageMetric> | undefined;
  /** The telemetry bridge's taps (`usageFlush`). */
  taps?: ApiKeyTaps;
  /**
   * The audit log's refusal aggregates (`audit.refusedVerifications`): called
   * once per key and past hour with refusals, from the rows written (never on
   * the verify path).
   */
  onRefusals?: RefusalSink;
  /**
   * How long after its time a count can still reach the recorder (default 0): an hour's
   * refusals are handed over once the clock is this far past its end (see `compileUsage`).
   */
  lateMs?: number;
  /** Hides keys in the recorder's warnings (the service's; default `redactApiKeys`). */
  redact?: Redact;
  /** How long a write given up at its deadline is first waited for (default `LATE_WRITE_WAIT_MS`). */
  lateWriteWaitMs?: number;
}

/**
 * How long flushes first wait for a write given up at its deadline before sending its batch again
 * (a write that never settles: its connection gone); doubled each time one is given up on, to
 * `MAX_LATE_WRITE_WAIT_MS`, and reset by a write that lands. So a lock holding writes for good
 * holds a connection more at most every wait, fewer and fewer, not one per flush.
 */
const LATE_WRITE_WAIT_MS = 60_000;
const MAX_LATE_WRITE_WAIT_MS = 3_600_000;

/** Receives one key's refusals of one UTC hour, by code (zeros left out). */
export type RefusalSink = (
  keyId: string,
  tenantId: string,
  hour: Date,
  refused: Partial<Record<ApiKeyUsageRefusalCode, number>>,
) => void;

/** Counts verification outcomes per key and hour and flushes them (see the module documentation). */
export class UsageRecorder {
  readonly #s: UsageRecorderSettings;
  /**
   * The rows waiting for a flush, one per key and hour, in hour order: a count of an earlier
   * hour than the latest (a request that began before it ended) joins its own hour's rows.
   */
  #hours: Hour[] = [];
  /** Rows in `#hours`. */
  #heldRows = 0;
  /** The rows of hour `#bucketMs`, the latest counted since the last flush (the last of `#hours`). */
  #current = new Map<string, Pending>();
  /** The hour of `#current` (none after a flush: the next count starts one). */
  #bucketMs = NaN;
  /** Failed writes, retried as they were (oldest first) before any other. */
  readonly #batches: Batch[] = [];
  /** Rows in `#batches`. */
  #batchedRows = 0;
  /**
   * While a flush writes `#batches` (until one fails): their rows are in
   * flight and do not count against `maxPendingKeys` (at most as many again).
   */
  #writing = false;
  /**
   * A write given up at its deadline and still running in the storage (`settled` when it ends),
   * since when (monotonic ms): no other is sent meanwhile, for `#lateWaitMs` at most, as its retry
   * would wait on it, each holding a pooled connection.
   */
  #lateWrite: { settled: Promise<void>; since: number } | undefined;
  /** How long the first write given up is waited for, and the next one (see `LATE_WRITE_WAIT_MS`). */
  readonly #firstLateWaitMs: number;
  #lateWaitMs: number;
  /** Refusals written, per key and hour, until their hour is past (`onRefusals`). */
  readonly #refusals = new Map<string, Pending>();
  /** Counts of unknown prefixes, never written. */
  readonly #scratch = new Pending("", "", 0);
  #timer: ReturnType<typeof setTimeout> | undefined;
  #flushing: Promise<unknown> | undefined;
  /** Whether `close()` was called: later counts are still flushed, by a timer that holds no process open. */
  #closed = false;
  readonly #failed: (error: unknown) => void;
  readonly #dropped: (error: unknown) => void;

  /** A recorder over `settings`; arms its timer on the first count. */
  constructor(settings: UsageRecorderSettings) {
    this.#s = settings;
    this.#lateWaitMs = this.#firstLateWaitMs = settings.lateWriteWaitMs ?? LATE_WRITE_WAIT_MS;
    this.#failed = warnOnce("usage flush (its counts are kept for the next one)", settings.redact);
    this.#dropped = warnOnce("usage recorder (rows dropped past maxPendingKeys)", settings.redact);
  }

  /** Rows held in memory (not yet stored). */
  get pendingRows(): number {
    return this.#heldRows + this.#batchedRows;
  }

  /**
   * Counts an accepted request of `cost` units and its `lastUsedAt`, at `nowMs`:
   * the request's one time, which the verify flow hands (no clock read here).
   * `takeBack`: a later check may refuse it (`refusedInstead`). Returns its row, for that.
   */
  accepted(
    keyId: string,
    tenantId: string,
    cost: number,
    nowMs: number,
    takeBack = false,
  ): CountedRow {
    const entry = this.#entry(keyId, tenantId, nowMs);
    entry.accepted++;
    entry.cost = plus(entry.cost, cost);
    const offset = nowMs - entry.bucketMs;
    if (takeBack) entry.keep(offset);
    // The latest time, also when the clock stepped back.
    else if (offset > entry.lastUsed) entry.lastUsed = offset;
    return entry;
  }

  /**
   * Counts a refusal of the key with `code` at `nowMs` (as `accepted`);
   * `keyId` `null` (an unknown prefix) counts nothing with the same work, so
   * it costs what a stored one does.
   */
  refused(
    keyId: string | null,
    tenantId: string,
    code: ApiKeyUsageRefusalCode,
    nowMs: number,
  ): void {
    this.#entry(keyId, tenantId, nowMs).refused[REFUSAL_INDEX[code]]++;
  }

  /**
   * Takes back an accepted request of `cost` counted at `nowMs` in `row` (`accepted` with
   * `takeBack`) that a later check of the same request refused with `code`, so that the request
   * counts one outcome: while that row waits for a flush, the accepted count and its cost leave
   * it, its time leaves its `lastUsedAt` (the latest of the accepted requests left, see
   * `Pending.open`), and the refusal is counted in it. A row a flush took (or dropped) is never
   * changed, nor is a newer row of its key and hour: then nothing is counted, the request stays
   * counted once, accepted.
   */
  refusedInstead(
    row: CountedRow,
    code: ApiKeyUsageRefusalCode,
    cost: number,
    nowMs: number,
  ): void {
    const hour = this.#hours[this.#indexOf(row.bucketMs)];
    if (hour?.rows.get(row.keyId) !== row || row.accepted === 0 || row.cost < cost) return;
    row.accepted--;
    row.cost -= cost;
    row.release(nowMs - row.bucketMs);
    row.refused[REFUSAL_INDEX[code]]++;
  }

  /**
   * Retries the failed writes as they were, then writes every held row,
   * 1,000 per storage call, in (key, hour) order; resolves the error of a
   * failed write (it and the later ones are kept, each with its rows and
   * batch id), or of the clock or `onRefusals` (the rows, or the hours not
   * handed over, are kept), else `undefined`: never rejects. One flush at a time: a call during a flush
   * waits for it, then flushes. `all`: hand over every gathered hour's
   * refusals (`close()`), not only the finished ones.
   */
  async flush(all = false): Promise<unknown> {
    while (this.#flushing !== undefined) await this.#flushing;
    const flushing = this.#flushOnce(all);
    this.#flushing = flushing;
    try {
      return await flushing;
    } finally {
      this.#flushing = undefined;
      if (this.pendingRows > 0 || this.#refusals.size > 0) this.#arm();
    }
  }

  /**
   * Flushes everything held, every gathered hour's refusals included; rejects with the storage's
   * error when a write fails (the rows stay held for another `close()`). Counts after it (requests
   * still in flight, a server draining) are flushed by the timer as before, armed so that it never
   * holds the process open: call `close()` again once they are done to write the last ones.
   */
  async close(): Promise<void> {
    this.#closed = true;
    // A write given up at its deadline: waited for (a deadline more at most), then the last
    // flush sends what did not land, whatever still runs.
    const late = this.#lateWrite;
    if (late !== undefined) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const waited = new Promise<void>((resolve) =>
        timer = setTimeout(resolve, this.#s.access.timeoutMs)
      );
      await Promise.race([late.settled, waited]);
      clearTimeout(timer);
      this.#lateWrite = undefined;
    }
    const error = await this.flush(true);
    if (error !== undefined) throw error;
  }

  /**
   * The row of `keyId` in the hour of `now`. On the path of a request in the latest hour: one
   * `Map` read and no access to any other row. `null` (an unknown prefix): the same read and the
   * scratch row, whatever the hour (no hour's rows looked up or started).
   */
  #entry(keyId: string | null, tenantId: string, now: number): Pending {
    const bucketMs = now - (now % HOUR_MS);
    const rows = bucketMs === this.#bucketMs || keyId === null
      ? this.#current
      : this.#hourRows(bucketMs);
    let entry = rows.get(keyId ?? "");
    if (keyId === null) return this.#scratch;
    if (entry !== undefined) return entry;
    entry = new Pending(keyId, tenantId, bucketMs);
    rows.set(keyId, entry);
    this.#heldRows++;
    this.#bound();
    this.#arm();
    return entry;
  }

  /**
   * The rows of hour `bucketMs`, added when it has none: a later hour than `#bucketMs` becomes
   * the current one; an earlier one (a late count, or the clock gone back) leaves it as it is.
   */
  #hourRows(bucketMs: number): Map<string, Pending> {
    const i = this.#indexOf(bucketMs);
    if (this.#hours[i]?.bucketMs === bucketMs) return this.#hours[i].rows;
    const rows = new Map<string, Pending>();
    this.#hours.splice(i, 0, { bucketMs, rows });
    if (i === this.#hours.length - 1) {
      this.#current = rows;
      this.#bucketMs = bucketMs;
    }
    return rows;
  }

  /** Where hour `bucketMs` is (or goes) in `#hours`, searched from the latest. */
  #indexOf(bucketMs: number): number {
    let i = this.#hours.length;
    while (i > 0 && this.#hours[i - 1].bucketMs >= bucketMs) i--;
    return i;
  }

  /**
   * Drops the oldest rows (of failed writes, then by hour, oldest first) past
   * `maxPendingKeys`, with a metric. A failed write keeps its id without
   * them: if it had committed, its retry still changes nothing.
   */
  #bound(): void {
    let dropped = 0;
    const inFlight = this.#writing ? this.#batchedRows : 0;
    while (this.pendingRows - inFlight > this.#s.maxPendingKeys) {
      if (this.#batchedRows > inFlight) {
        const batch = this.#batches.find((b) => b.rows.length > 0)!;
        batch.rows.shift();
        this.#batchedRows--;
      } else {
        // An hour whose rows were all dropped goes (never the last with a row: `#heldRows` > 0).
        while (this.#hours[0].rows.size === 0) this.#hours.shift();
        const { rows } = this.#hours[0];
        rows.delete(rows.keys().next().value!);
        this.#heldRows--;
      }
      dropped++;
    }
    if (dropped === 0) return;
    this.#s.taps?.usageFlush?.("dropped", dropped);
    const metric: ApiKeyUsageMetric = {
      type: "api_key.usage_flush",
      outcome: "dropped",
      rows: dropped,
    };
    if (this.#s.emitMetric === undefined) this.#dropped(new RangeError("maxPendingKeys"));
    else this.#s.emitMetric(metric);
  }

  #arm(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      // Never rejects unhandled: a failure the flush did not resolve is reported as one it did.
      this.flush().catch((error) => this.#failure(error, this.pendingRows));
    }, this.#s.flushIntervalMs);
    if (this.#closed) unref(this.#timer);
  }

  async #flushOnce(all: boolean): Promise<unknown> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    // When the rows are taken: every count they miss is later than this (`#reportRefusals`).
    // A clock that throws takes nothing: the rows and refusals wait for the next flush.
    let takenMs = 0;
    try {
      if (this.#s.onRefusals !== undefined) takenMs = this.#s.clock().getTime();
    } catch (error) {
      return this.#failure(error, this.pendingRows);
    }
    const held = this.#hours.flatMap((hour) => [...hour.rows.values()]);
    this.#hours = [];
    this.#heldRows = 0;
    this.#current = new Map();
    this.#bucketMs = NaN;
    held.sort((a, b) => a.keyId < b.keyId ? -1 : a.keyId > b.keyId ? 1 : a.bucketMs - b.bucketMs);
    for (let i = 0; i < held.length; i += USAGE_ROWS_PER_WRITE) {
      this.#batches.push({
        id: crypto.randomUUID(),
        rows: held.slice(i, i + USAGE_ROWS_PER_WRITE),
      });
    }
    this.#batchedRows += held.length;
    this.#writing = true;
    while (this.#batches.length > 0) {
      const batch = this.#batches[0];
      const traced = this.#s.taps?.span?.("api_key.usage.write", batch.rows.length);
      try {
        this.#awaitLateWrite();
        if (batch.rows.length > 0) {
          await this.#s.access.record(
            batch.rows.map((entry) => entry.toRow()),
            batch.id,
            this.#lateOf(batch),
          );
          this.#lateWaitMs = this.#firstLateWaitMs;
        }
        traced?.();
      } catch (error) {
        traced?.(errorNameOf(error));
        this.#writing = false;
        this.#bound(); // the rows counted during the write, beside the failed ones
        return this.#failure(error, this.#batchedRows);
      }
      this.#written(batch);
    }
    this.#writing = false;
    try {
      if (this.#s.onRefusals !== undefined) this.#reportRefusals(this.#s.onRefusals, takenMs, all);
    } catch (error) {
      // The sink (its clock read) failed: the hours it did not take wait for the next flush.
      return this.#failure(error, this.pendingRows);
    }
    return undefined;
  }

  /** `batch`, the first of `#batches`, landed: it leaves the list (rows `#bound` dropped already had). */
  #written(batch: Batch): void {
    this.#batches.shift();
    this.#batchedRows -= batch.rows.length;
    if (batch.rows.length > 0) this.#emit("written", batch.rows.length);
    if (this.#s.onRefusals !== undefined) this.#gatherRefusals(batch.rows);
  }

  /**
   * Throws while a write given up at its deadline still runs, for `#lateWaitMs` (`close` waits
   * for it apart, then clears it); past it, gives it up (its batch is sent again: with `usageBatches`, its
   * late commit counts once) and doubles the next wait.
   */
  #awaitLateWrite(): void {
    const late = this.#lateWrite;
    if (late === undefined) return;
    if (performance.now() - late.since < this.#lateWaitMs) {
      throw new Error("a usage write given up at its deadline has not settled: not retried yet");
    }
    this.#lateWrite = undefined;
    this.#lateWaitMs = Math.min(2 * this.#lateWaitMs, MAX_LATE_WRITE_WAIT_MS);
  }

  /**
   * Hears of `batch`'s write given up at its deadline: while it runs, `#lateWrite`; landing, the
   * batch leaves the list unless a flush is sending it again (never sent twice, so never counted
   * twice without `usageBatches`).
   */
  #lateOf(batch: Batch): Late<void> {
    return {
      answer: () => {
        if (!this.#writing && this.#batches[0] === batch) this.#written(batch);
      },
      pending: (settled) => {
        const late = { settled, since: performance.now() };
        this.#lateWrite = late;
        void settled.then(() => {
          if (this.#lateWrite === late) this.#lateWrite = undefined;
        });
      },
    };
  }

  /**
   * Reports a failed flush, `rows` kept for the next one: a `failed` metric, or without
   * `onMetric` one console warning. Returns `error`.
   */
  #failure(error: unknown, rows: number): unknown {
    this.#emit("failed", rows);
    if (this.#s.emitMetric === undefined) this.#failed(error);
    return error;
  }

  /** Adds the refusals of rows written to their key's hour. */
  #gatherRefusals(rows: Pending[]): void {
    for (const row of rows) {
      if (!row.refused.some((n) => n > 0)) continue;
      const id = `${row.bucketMs} ${row.keyId}`;
      const gathered = this.#refusals.get(id) ??
        new Pending(row.keyId, row.tenantId, row.bucketMs);
      for (let i = 0; i < row.refused.length; i++) gathered.refused[i] += row.refused[i];
      this.#refusals.set(id, gathered);
    }
  }

  /**
   * Hands over each gathered hour (every one when `all`) that no count can still join: one that
   * ended `lateMs` before `takenMs`, the time the flush took its rows (a count of it reaches the
   * recorder by then, so it was in them), so one record per key, hour and instance. An hour
   * leaves the gathered ones once the sink took it: when the sink throws, it and the later ones stay.
   */
  #reportRefusals(sink: RefusalSink, takenMs: number, all: boolean): void {
    const ended = takenMs - (this.#s.lateMs ?? 0) - HOUR_MS;
    for (const [id, gathered] of this.#refusals) {
      if (gathered.bucketMs > ended && !all) continue;
      const refused: Partial<Record<ApiKeyUsageRefusalCode, number>> = {};
      API_KEY_USAGE_REFUSALS.forEach((code, i) => {
        if (gathered.refused[i] > 0) refused[code] = gathered.refused[i];
      });
      sink(gathered.keyId, gathered.tenantId, new Date(gathered.bucketMs), refused);
      this.#refusals.delete(id);
    }
  }

  #emit(outcome: ApiKeyUsageMetric["outcome"], rows: number): void {
    this.#s.taps?.usageFlush?.(outcome, rows);
    this.#s.emitMetric?.({ type: "api_key.usage_flush", outcome, rows });
  }
}

/**
 * The recorder of the service option `usage` (`undefined` when it is
 * omitted or `false`). Throws a `TypeError` naming the option when it is
 * malformed or the storage lacks the usage capability (`usageOptions`).
 * A count is at its request's time, taken before the request's awaits: its
 * storage lookup (at most `storageTimeoutMs`) and its limiter check (at most
 * the limiter's `timeoutMs`), so it reaches the recorder at most their sum
 * later, `lateMs` (a `rateLimitResolver` slower than that is not bounded).
 */
export function compileUsage(
  option: unknown,
  access: UsageAccess | undefined,
  clock: () => Date,
  label: string,
  taps: ApiKeyTaps = {},
  onRefusals?: RefusalSink,
  lateMs = 0,
  redact?: Redact,
): UsageRecorder | undefined {
  const checked = usageOptions(option, access !== undefined, label, onRefusals !== undefined);
  if (checked === undefined || access === undefined) return undefined;
  return new UsageRecorder({
    access,
    clock,
    flushIntervalMs: checked.flushIntervalMs,
    maxPendingKeys: checked.maxPendingKeys,
    emitMetric: createDispatcher(
      checked.onMetric,
      checked.onMetricError,
      "usage.onMetric",
      false,
      redact,
    ),
    taps,
    onRefusals,
    lateMs,
    redact,
  });
}

/** The window of a usage query, validated and widened to whole buckets (`checkUsageWindow`); the storage's access. */
function usageWindow(
  access: UsageAccess | undefined,
  tenantId: string,
  query: ApiKeyUsageQuery,
): { access: UsageAccess; from: Date; to: Date } {
  requireTenantId(tenantId);
  if (typeof query !== "object" || query === null) fail("query", "must be an object");
  const { keyId } = query;
  if (keyId !== undefined) requireNonEmptyString(keyId, "keyId");
  const { fromMs, toMs } = checkUsageWindow(query);
  if (access === undefined) {
    throw new TypeError(
      "ApiKeysService.usage needs a storage with the capabilities recordUsage and readUsage",
    );
  }
  return { access, from: new Date(fromMs), to: new Date(toMs) };
}

/**
 * `hours` as `granularity` buckets: as they are, or summed per UTC day (a storage that answered
 * days for a day read: one bucket each, as they are).
 */
function inBuckets(hours: ApiKeyUsageBucket[], granularity: "hour" | "day"): ApiKeyUsageBucket[] {
  if (granularity === "hour") return hours;
  const perDay: ApiKeyUsageBucket[] = [];
  for (const hour of hours) {
    const startMs = hour.start.getTime() - (hour.start.getTime() % DAY_MS);
    let day = perDay.at(-1);
    if (day?.start.getTime() !== startMs) {
      day = { ...zeroCounts(), start: new Date(startMs) };
      perDay.push(day);
    }
    addCounts(day, hour);
  }
  return perDay;
}

/**
 * `ApiKeysService.usage`: validates the query (`ApiKeyValidationError`
 * naming the field), reads the tenant's hours and sums them per day for
 * `"day"`. Rejects with a `TypeError` when the storage lacks `readUsage`.
 */
export async function readUsage(
  storage: UsageAccess | undefined,
  tenantId: string,
  query: ApiKeyUsageQuery,
): Promise<ApiKeyUsageBucket[]> {
  const { access, from, to } = usageWindow(storage, tenantId, query);
  const { keyId, granularity } = query;
  const hours = await access.read({
    tenantId,
    ...(keyId === undefined ? {} : { keyId }),
    from,
    to,
    granularity,
  });
  return inBuckets(hours, granularity);
}

/**
 * The usage of each of `keyIds` (bounded by the caller: `GET /usage`'s
 * `MAX_KEYS_PER_READ`) over one window, in one storage read when it has
 * `readUsageOfKeys`: a list per key, in order.
 */
export async function readUsageOfKeys(
  storage: UsageAccess | undefined,
  tenantId: string,
  keyIds: readonly string[],
  query: Omit<ApiKeyUsageQuery, "keyId">,
): Promise<ApiKeyUsageBucket[][]> {
  const { access, from, to } = usageWindow(storage, tenantId, query);
  for (const keyId of keyIds) requireNonEmptyString(keyId, "keyId");
  const { granularity } = query;
  const lists = await access.readKeys({ tenantId, keyIds, from, to, granularity });
  return lists.map((hours) => inBuckets(hours, granularity));
}
