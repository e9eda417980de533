/**
 * The rate limiter: validates a check, asks the store through its one door
 * (`_door.ts`: deadline, batching, a bounded number of calls in flight) with
 * every policy's counter and the credit balance, and applies the failure
 * policy when the store does not answer.
 *
 * @module
 */
import { createMemoryRateLimitStore } from "./memory_store.ts";
import {
  type CompiledRateLimitPolicy,
  compileRateLimitPolicies,
  type RateLimitPolicy,
} from "./policy.ts";
import type {
  CounterResult,
  CreditBalance,
  CreditChange,
  CreditChangeResult,
  CreditCounter,
  CreditRefill,
  RateLimitCounter,
  RateLimitStore,
} from "./store.ts";
import { compileCreditChange, compileCreditRefill } from "./credits.ts";
import { settleBalance } from "./_refill.ts";
import { type CheckTrace, type LimiterTaps, registerTaps } from "../telemetry/_taps.ts";
import { errorNameOf } from "../telemetry/_error_name.ts";
import { assertCounterResult, causeOf, createStoreDoor, malformed, Unanswered } from "./_door.ts";
import { isWellFormed } from "./_well_formed.ts";
import { DEFAULT_REFUSALS, Refusals } from "./_refusals.ts";
import { assertKnownOptions, optionalFunction } from "./_options.ts";
import { callDetached } from "../telemetry/_detached.ts";
import { setRef } from "./_watchdog.ts";
import {
  assertCost,
  assertCount,
  assertCredits,
  assertEpochMs,
  assertName,
  assertSubject,
  MAX_CREDITS,
} from "./_checks.ts";
import { assertKnownFields } from "../telemetry/_known_fields.ts";

/** What happens to a check the store does not answer (see docs/rate-limits.md "Failure policy"). */
export type OnStoreError = "open" | "closed" | "local";

/** Reported at most once per `metricIntervalMs` while the store fails or times out. */
export interface RateLimitMetric {
  /** Metric type. */
  type: "rate_limit.store_unavailable";
  /** The failure policy applied (the outcome of those checks). */
  onStoreError: OnStoreError;
  /** Checks answered by the failure policy since the previous report, this one included. */
  failures: number;
  /** Why the check that triggered this report was not answered by the store. */
  reason: "timeout" | "error";
}

/** The store's call latency, reported at most once per `metricIntervalMs` while calls are made. */
export interface RateLimitLatencyMetric {
  /** Metric type. */
  type: "rate_limit.store_latency";
  /** Store calls settled since the previous report (a batch of checks is one call). */
  calls: number;
  /** Checks those calls carried. */
  checks: number;
  /** Mean ms from sending a call to its settling. */
  meanMs: number;
  /** Longest of them, in ms. */
  maxMs: number;
}

/** Any metric of a limiter. */
export type RateLimiterMetric = RateLimitMetric | RateLimitLatencyMetric;

/** Options of `createRateLimiter` (an unknown option is a `TypeError`). */
export interface RateLimiterOptions {
  /** Where counters live (default: a new in-memory store). */
  store?: RateLimitStore;
  /**
   * When the store fails or does not answer within `timeoutMs`: `"open"` lets
   * requests pass uncounted (default), `"closed"` refuses them (503),
   * `"local"` enforces each policy per instance at floor(limit / `instances`)
   * and refuses credit spends.
   */
  onStoreError?: OnStoreError;
  /** With `"local"` (required there, refused elsewhere): how many instances share the store (1–10,000). */
  instances?: number;
  /**
   * Longest wait for the store, in ms (1–60,000; default 1,000). It bounds the
   * latency a stall adds; no check is applied after its answer whatever it is.
   */
  timeoutMs?: number;
  /** Metric sink (sync or async; a throw or rejection goes to `onMetricError`). */
  onMetric?: (metric: RateLimiterMetric) => void | Promise<void>;
  /** Receives errors of `onMetric` (default: one console warning, then silence). */
  onMetricError?: (error: unknown, metric: RateLimiterMetric) => void;
  /** Least ms between two reports of one metric type, and between two log lines (default 10,000). */
  metricIntervalMs?: number;
  /** Receives the start-up line and the failure lines (default `console.info`, failure lines `console.warn`). */
  logger?: (line: string) => void;
  /**
   * With a remote store: how many subjects' refusals are remembered (0–1,000,000; default
   * 10,000; 0: none). A check the store refused on a policy is refused again without the
   * store until that policy can have room (docs/rate-limits.md, "Refusals remembered").
   */
  refusalMemory?: number;
}

const OPTIONS = [
  "store",
  "onStoreError",
  "instances",
  "timeoutMs",
  "onMetric",
  "onMetricError",
  "metricIntervalMs",
  "logger",
  "refusalMemory",
] as const;

/** Options of one check (an unknown one is a `TypeError`). */
export interface RateLimitCheckOptions {
  /** Units this request counts on every policy and spends of `credits` (0–10^15; default: each policy's `cost`, 1 credit); 0 only checks. */
  cost?: number;
  /** One subject per policy, in order, in place of `check`'s `subject` (e.g. a tenant's shared counter beside a key's). */
  subjects?: readonly string[];
  /**
   * A credit balance to spend from in the same atomic step as the policies, or
   * a list of 1–8 distinct balances (e.g. a key's and its tenant's pool), all
   * spent or none.
   */
  credits?: RateLimitCredits | readonly RateLimitCredits[];
  /**
   * The group every counter of this check lives with (default: `subject`):
   * on Redis, their hash tag, so a check whose counters have several subjects
   * (a tenant's shared policy, a predecessor's balance) lands in one Redis
   * Cluster slot. Pass the tenant for every check of a tenant's keys: that
   * tenant's counters then live on one node. Part of a counter's identity on
   * Redis: give each subject always the same slot. A subject's characters
   * (no `{` or `}`: it is the hash tag).
   */
  slot?: string;
}

/** The credit balance of a check: a `CreditCounter` without `kind` and `cost`; `subject` defaults to the check's, `name` to `credits`; an unknown field is a `TypeError`. */
export interface RateLimitCredits {
  /** Balance to start from when the store holds none (0–`MAX_CREDITS`). */
  readonly initial: number;
  /** When `initial` was true, in ms since the epoch (default: now). */
  readonly initialAt?: number;
  /** Refill rule. */
  readonly refill?: CreditRefill;
  /** Whose balance (default: the check's subject), e.g. one shared by a key and its rotated successor. */
  readonly subject?: string;
  /** Balance name (a policy name; default `credits`). */
  readonly name?: string;
  /**
   * The balance's slot (a check's `slot` wins). The check's window counters
   * keep theirs (the check's subject): on a clustered store pass the check's
   * `slot` instead, or the check is a `TypeError`.
   */
  readonly slot?: string;
}

/** One balance to read: whose, and its credits. */
export interface RateLimitBalance {
  /** Whose balance (`credits.subject` wins when given). */
  readonly subject: string;
  /** The balance. */
  readonly credits: RateLimitCredits;
}

/** One policy's answer. */
export interface RateLimitPolicyResult extends CounterResult {
  /** Policy name. */
  readonly name: string;
  /** Policy limit (with `outcome: "local"`, this instance's share). */
  readonly limit: number;
  /** Policy window in ms. */
  readonly windowMs: number;
}

/** The answer of `check`. A store bug never answers: `check` rejects with a `TypeError` naming it. */
export interface RateLimitResult {
  /** Whether the request may proceed. */
  readonly allowed: boolean;
  /** The store did not answer: `allowed` is the failure policy's answer. */
  readonly unavailable: boolean;
  /**
   * Who answered: `store`; `open` or `closed` (the failure policy; `policies`
   * empty); `local` (this instance's counts, `policies` with its shares; a
   * check with credits refused with `policies` empty).
   */
  readonly outcome: "store" | OnStoreError;
  /** Why the store did not answer (not with `store`): `timeout` (no reply in time, or too late to apply) or `error`. */
  readonly reason?: "timeout" | "error";
  /** Each policy's answer, in the order given. */
  readonly policies: readonly RateLimitPolicyResult[];
  /** The (first) balance's answer when the check named `credits` and the store answered. */
  readonly credits?: CounterResult;
  /** Each balance's answer, in the order `credits` named them (when the store answered). */
  readonly balances?: readonly CounterResult[];
}

/** A rate limiter over one store: the one door to it (every store call goes through the limiter). */
export interface RateLimiter {
  /** The failure policy in force. */
  readonly onStoreError: OnStoreError;
  /** Longest wait for the store, in ms (the option `timeoutMs`). */
  readonly timeoutMs: number;
  /** The store checked (the API-key service writes a Redis store's balances back through it). */
  readonly store: RateLimitStore;
  /**
   * Checks the store once, within `timeoutMs`: call and await it at start-up.
   * Rejects with a `TypeError` for a misconfiguration the store names (a client
   * never connected or passed as the store, a missing migration); a store
   * merely down resolves, logs one line, and the failure policy applies.
   */
  ready(): Promise<void>;
  /**
   * Checks `subject` against every policy and `options.credits` at once; all or
   * nothing (`policies` may be empty when `credits` is given). Rejects with a
   * `TypeError` for a bad subject, policy, cost or credits, and for a store bug
   * or malformed reply; never for the store being unavailable (see `outcome`).
   */
  check(
    subject: string,
    policies: readonly RateLimitPolicy[],
    options?: RateLimitCheckOptions,
  ): Promise<RateLimitResult>;
  /**
   * With an in-process store (one that has `checkNow`, as the memory store;
   * absent otherwise): `check` answered synchronously, with no turn of the
   * microtask queue. Throws where `check` rejects. `nowMs`: the caller's
   * wall-clock time (ms since the epoch), read for this check, never kept
   * from an earlier one; the store counts at it when it runs on `Date.now()`
   * (the memory store without `now`; a bad one is a `TypeError`) and reads
   * no clock of its own.
   */
  checkNow?(
    subject: string,
    policies: readonly RateLimitPolicy[],
    options?: RateLimitCheckOptions,
    nowMs?: number,
  ): RateLimitResult;
  /**
   * Sets or adds to the balance `credits` names (its refill due applied first),
   * or keeps it anchored at the change (`{ anchor: true }`, see `CreditChange`),
   * atomically with concurrent spends, within `timeoutMs`; answers the
   * balance before it too when the store tells it (`CreditChangeResult`).
   * Rejects with a `TypeError` for bad input, a store without `changeCredits`,
   * `{ anchor: true }` on a store without `anchorsCredits`, or a malformed
   * reply, and with an `Error` naming the store and the reason when the store
   * fails or is late.
   */
  changeCredits(
    subject: string,
    credits: RateLimitCredits,
    change: CreditChange,
  ): Promise<CreditChangeResult>;
  /**
   * Reads balances (1–500) without writing: a balance the store does not hold
   * is its `initial` with the refills due since `initialAt`. Rejects as
   * `changeCredits` does.
   */
  readCredits(balances: readonly RateLimitBalance[]): Promise<readonly CounterResult[]>;
  /**
   * With a store that has `drainCreditChanges` (Redis; absent otherwise): the
   * balances to write back, through the door within `timeoutMs`. Rejects as
   * `changeCredits` does; what a late or failed drain drained is kept and
   * answered by the next drain (the newest balance of each, never one older
   * than a balance already answered), never lost, unless a `changeCredits` of
   * that balance called after the drain succeeds (the change supersedes it).
   * A partial drain (a Redis Cluster with some hash tags' node away) rejects
   * with an error whose `drained` lists the balances read, to write back now;
   * the others are kept.
   */
  drainCreditChanges?(): Promise<readonly CreditBalance[]>;
  /**
   * With `drainCreditChanges`: whether a drain that missed its deadline has
   * not answered yet (what it drains, a later drain answers). A caller that
   * maps drained subjects to their owners keeps each mapping until then.
   */
  drainPending?(): boolean;
}

/** The options of one check: any other is refused (a misspelt `cost` silently 1). */
const CHECK_OPTIONS: readonly string[] = Object.keys(
  { cost: true, subjects: true, credits: true, slot: true } satisfies Record<
    keyof RateLimitCheckOptions,
    true
  >,
);

/** The fields of a check's balance: any other is refused (a misspelt `subject`: a fresh balance). */
const CREDIT_FIELDS: readonly string[] = Object.keys(
  {
    initial: true,
    initialAt: true,
    refill: true,
    subject: true,
    name: true,
    slot: true,
  } satisfies Record<keyof RateLimitCredits, true>,
);

/**
 * The window counters of `compiled` for `subject` (or `subjects[i]` for policy
 * `i`), in `slot` when given, each counting `cost` (default: the policy's),
 * then the credit counters `balances` when given: one list, built at its length.
 */
function windowCounters(
  subject: string,
  compiled: readonly CompiledRateLimitPolicy[],
  subjects: readonly string[] | undefined,
  slot: string | undefined,
  cost: number | undefined,
  balances?: readonly CreditCounter[],
): RateLimitCounter[] {
  const n = compiled.length;
  const counters: RateLimitCounter[] = new Array(n + (balances?.length ?? 0));
  if (balances !== undefined) {
    for (let j = 0; j < balances.length; j++) counters[n + j] = balances[j];
  }
  for (let i = 0; i < n; i++) {
    const policy = compiled[i];
    const own = subjects === undefined ? subject : subjects[i];
    // Two literals, not a spread: one object shape per kind of check, built without a copy.
    counters[i] = slot === undefined
      ? {
        kind: "window",
        subject: own,
        name: policy.name,
        limit: policy.limit,
        windowMs: policy.windowMs,
        cost: cost ?? policy.cost,
      }
      : {
        kind: "window",
        subject: own,
        slot,
        name: policy.name,
        limit: policy.limit,
        windowMs: policy.windowMs,
        cost: cost ?? policy.cost,
      };
  }
  return counters;
}

/**
 * The credit counter of `credits` for `subject` (in `slot` when given, else
 * the balance's own); a `TypeError` names the bad or unknown field.
 */
function creditCounter(
  subject: string,
  credits: RateLimitCredits,
  cost: number,
  slot?: string,
): CreditCounter {
  if (typeof credits !== "object" || credits === null) {
    throw new TypeError("credits must be an object");
  }
  assertKnownFields(credits, CREDIT_FIELDS, "credits");
  const { initialAt } = credits;
  if (initialAt !== undefined) assertEpochMs(initialAt, "credits.initialAt");
  const refill = compileCreditRefill(credits.refill);
  // Optional fields assigned in one order, not spread: one object shape per kind of balance.
  const counter: { -readonly [K in keyof CreditCounter]: CreditCounter[K] } = {
    kind: "credit",
    subject: credits.subject === undefined ? subject : assertSubject(credits.subject),
    name: credits.name === undefined ? "credits" : assertName(credits.name, "credits.name"),
    cost,
    initial: assertCredits(credits.initial, "credits.initial"),
  };
  if (initialAt !== undefined) counter.initialAt = initialAt;
  if (refill !== undefined) counter.refill = refill;
  if (credits.slot !== undefined) assertSubject(credits.slot);
  const own = slot ?? credits.slot; // a check's slot wins (validated by the check)
  if (own !== undefined) counter.slot = own;
  return counter;
}

/**
 * On a clustered store (one script, one hash slot), a `TypeError` unless every
 * counter of a check has one hash tag (its `slot`, else its subject): Redis
 * would refuse the script (`CROSSSLOT`), and the failure policy pass it.
 */
function assertOneTag(counters: readonly RateLimitCounter[]): void {
  const tag = counters[0]?.slot ?? counters[0]?.subject;
  for (const counter of counters) {
    if ((counter.slot ?? counter.subject) !== tag) {
      throw new TypeError(
        "a check on a clustered store keeps every counter under one hash tag: pass `slot` " +
          "(e.g. the tenant) when its counters have several subjects or a balance its own slot",
      );
    }
  }
}

/** Most balances one check spends. */
const MAX_BALANCES = 8;

/** The credit counters of a check's `credits` (one or a list, in `slot` when given); a `TypeError` names the bad one. */
function creditCounters(
  subject: string,
  credits: RateLimitCredits | readonly RateLimitCredits[],
  cost: number,
  slot: string | undefined,
): CreditCounter[] {
  if (!Array.isArray(credits)) {
    return [creditCounter(subject, credits as RateLimitCredits, cost, slot)];
  }
  if (credits.length === 0 || credits.length > MAX_BALANCES) {
    throw new TypeError(`credits must list 1-${MAX_BALANCES} balances`);
  }
  const counters = credits.map((c) => creditCounter(subject, c, cost, slot));
  const names = new Set(counters.map((c) => JSON.stringify([c.subject, c.name])));
  if (names.size !== counters.length) throw new TypeError("credits must name each balance once");
  return counters;
}

/** What the failure policy does, in log lines. */
const DOES: Record<OnStoreError, string> = {
  open: "passed uncounted",
  closed: "refused",
  local: "counted per instance",
};

/**
 * The limiter's reports: failure lines (through `log`) and metrics, at most
 * one per interval, the failures between counted and reported at the
 * interval's end (a timer that never holds the process open) if no later
 * failure reports them; a line when the store answers again, after the
 * failure lines; latency.
 */
function reporter(
  options: RateLimiterOptions,
  policy: OnStoreError,
  storeName: string,
  log: (line: string) => void,
  taps: LimiterTaps,
) {
  const interval = assertCount(options.metricIntervalMs ?? 10_000, 0, "metricIntervalMs");
  const sink = options.onMetric;
  let warned = false;
  const onError = (metric: RateLimiterMetric) => (error: unknown) => {
    if (options.onMetricError) {
      callDetached(options.onMetricError, [error, metric], () => {});
    } else if (!warned) {
      warned = true;
      console.warn(`rate-limits: onMetric failed (${errorNameOf(error)})`);
    }
  };
  const emit = (metric: RateLimiterMetric) => {
    if (sink !== undefined) callDetached(sink, [metric], onError(metric));
  };
  /** Failures not reported yet, and the reason of the last. */
  let failures = 0;
  let reason: "timeout" | "error" = "error";
  let lastFailure = -Infinity;
  /** Whether the store's last call failed. */
  let failing = false;
  /** Whether a failure line was written since the last recovery line. */
  let down = false;
  let trailing: ReturnType<typeof setTimeout> | undefined;
  let calls = 0;
  let checks = 0;
  let totalMs = 0;
  let maxMs = 0;
  let lastLatency = -Infinity;
  const recovered = () => {
    if (failing || !down) return;
    down = false;
    log(`rate-limits: the ${storeName} store answers again`);
  };
  const flush = () => {
    trailing = undefined;
    if (failures === 0) return;
    lastFailure = performance.now();
    const n = failures;
    failures = 0;
    down = true;
    log(
      `rate-limits: the ${storeName} store is unavailable (${reason}): ${n} check${
        n === 1 ? "" : "s"
      } answered by onStoreError "${policy}" (${DOES[policy]}) since the last line`,
    );
    emit({ type: "rate_limit.store_unavailable", onStoreError: policy, failures: n, reason });
    recovered();
  };
  return {
    failure(why: "timeout" | "error") {
      taps.unavailable?.(why);
      failures++;
      reason = why;
      failing = true;
      const wait = lastFailure + interval - performance.now();
      if (wait <= 0) flush();
      else if (trailing === undefined) {
        trailing = setTimeout(flush, wait);
        setRef(trailing, false);
      }
    },
    answered() {
      if (!failing) return;
      failing = false;
      if (failures === 0) recovered(); // else after the failures' line, at the interval's end
    },
    /**
     * A store call started at `sentAt` (`performance.now()` ms) settled, with `n` checks
     * (`errorType`: it failed).
     */
    latency(sentAt: number, n: number, errorType?: string) {
      if (taps.storeCall === undefined && sink === undefined) return; // no clock read for nobody
      const ms = performance.now() - sentAt;
      taps.storeCall?.(ms, n, errorType);
      if (sink === undefined) return;
      calls++;
      checks += n;
      totalMs += ms;
      maxMs = Math.max(maxMs, ms);
      const now = performance.now();
      if (now - lastLatency < interval) return;
      lastLatency = now;
      emit({ type: "rate_limit.store_latency", calls, checks, meanMs: totalMs / calls, maxMs });
      calls =
        checks =
        totalMs =
        maxMs =
          0;
    },
  };
}

/** Throws a `TypeError` saying what to pass unless `store` has `checkBatch`. */
function assertStore(store: unknown): RateLimitStore {
  const s = store as Record<string, unknown> | null;
  const has = (name: string) => typeof s?.[name] === "function";
  if (typeof s === "object" && s !== null && has("checkBatch")) return store as RateLimitStore;
  const hint = typeof s !== "object" || s === null
    ? `got ${s === null ? "null" : typeof s}`
    : has("evalSha") || has("sendCommand")
    ? 'this is a Redis client: pass createRedisRateLimitStore({ client }) from "./rate-limits/redis"'
    : has("query")
    ? "this is a PostgreSQL pool or client: pass createPostgresRateLimitStore({ pool }) from " +
      '"./rate-limits/postgres"'
    : has("check") && typeof s.onStoreError === "string"
    ? "this is a rate limiter: pass the limiter itself where one is taken, or its store"
    : has("check")
    ? "it has check(counters) of the old contract: implement checkBatch (docs/rate-limits.md, Stores)"
    : "it has no checkBatch";
  throw new TypeError(
    `createRateLimiter: store must be a rate-limit store (createMemoryRateLimitStore, ` +
      `createRedisRateLimitStore or createPostgresRateLimitStore); ${hint}`,
  );
}

/** `Store failed <what> (<error>)` or `did not answer <what> within <ms> ms`, as an `Error`. */
function unansweredError(
  storeName: string,
  what: string,
  answer: Unanswered,
  timeoutMs: number,
): Error {
  if (answer.reason === "timeout") {
    return new Error(
      `rate-limits: the ${storeName} store did not answer ${what} within ${timeoutMs} ms`,
    );
  }
  return new Error(
    `rate-limits: the ${storeName} store failed ${what} (${causeOf(answer.cause)})`,
    { cause: answer.cause },
  );
}

/** The options of a check given none (never kept: its subject changes from check to check). */
const NO_OPTIONS: RateLimitCheckOptions = Object.freeze({});

/** No policies (a check of credits only), and no policy results. */
const NO_POLICIES: readonly never[] = Object.freeze([]);

/** A validated check: its counters for the store, built once when its inputs cannot change. */
interface Prepared {
  readonly subject: string;
  readonly policies: readonly RateLimitPolicy[];
  readonly compiled: readonly CompiledRateLimitPolicy[];
  readonly counters: readonly RateLimitCounter[];
  readonly credits: boolean;
  /** Whether it is kept (its inputs cannot change): a refusal of it can be remembered. */
  readonly kept: boolean;
}

/**
 * Whether `value` can never answer differently: frozen, of a plain prototype, and
 * with data properties only (a getter could answer anew on every read).
 */
function fixed(value: unknown): boolean {
  if (typeof value !== "object" || value === null || !Object.isFrozen(value)) return false;
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== Array.prototype && proto !== null) return false;
  for (const key of Reflect.ownKeys(value)) {
    if (!("value" in Object.getOwnPropertyDescriptor(value, key)!)) return false;
  }
  return true;
}

/** Whether a balance (and its refill) can never change. */
const fixedBalance = (c: RateLimitCredits) =>
  fixed(c) && (c.refill === undefined || fixed(c.refill));

/**
 * Whether check options can never change (see `fixed`), with their `subjects`
 * and balances (strings and numbers cannot change).
 */
function unchanging(options: RateLimitCheckOptions): boolean {
  if (!fixed(options)) return false;
  const { subjects, credits } = options;
  return (subjects === undefined || fixed(subjects)) &&
    (credits === undefined ||
      (Array.isArray(credits)
        ? fixed(credits) && (credits as readonly RateLimitCredits[]).every(fixedBalance)
        : fixedBalance(credits as RateLimitCredits)));
}

/**
 * Creates a rate limiter: the one door to its store. Prints one start-up line
 * naming the store and the failure policy; call `ready()` once at start-up.
 * Throws a `TypeError` for a bad or unknown option, or a `store` that is not
 * one (e.g. a Redis client: it says what to pass).
 *
 * @example
 * ```ts
 * import { createRateLimiter } from "./limiter.ts";
 * const limiter = createRateLimiter({ onStoreError: "open" });
 * await limiter.ready();
 * const result = await limiter.check("key_1", [{ name: "api", limit: 100, windowMs: 60_000 }]);
 * if (!result.allowed) console.log(result.outcome === "store" ? 429 : 503);
 * ```
 */
export function createRateLimiter(options: RateLimiterOptions = {}): RateLimiter {
  assertKnownOptions(options, OPTIONS, "createRateLimiter");
  for (const name of ["logger", "onMetric", "onMetricError"] as const) {
    optionalFunction(options[name], name, "createRateLimiter");
  }
  const store = options.store === undefined
    ? createMemoryRateLimitStore()
    : assertStore(options.store);
  const onStoreError = options.onStoreError ?? "open";
  if (onStoreError !== "open" && onStoreError !== "closed" && onStoreError !== "local") {
    throw new TypeError('onStoreError must be "open", "closed" or "local"');
  }
  let instances = 1;
  if (onStoreError === "local") {
    instances = assertCount(options.instances, 1, "instances");
    if (instances > 10_000) throw new TypeError("instances must be at most 10000");
  } else if (options.instances !== undefined) {
    throw new TypeError('instances is only for onStoreError "local"');
  }
  const timeoutMs = assertCount(options.timeoutMs ?? 1_000, 1, "timeoutMs");
  if (timeoutMs > 60_000) throw new TypeError("timeoutMs must be at most 60000");
  const info = options.logger ?? console.info;
  const warn = options.logger ?? console.warn;
  const log = (sink: (line: string) => void) => (line: string) =>
    callDetached(sink, [line], () => {});
  const storeName = store.name ?? "custom";
  const taps: LimiterTaps = {};
  const report = reporter(options, onStoreError, storeName, log(warn), taps);
  const door = createStoreDoor(store, timeoutMs, report.latency, taps);
  const inProcess = typeof store.checkNow === "function";
  const clustered = store.clustered === true;
  /** This library's in-process store: its answers to window counters are policy results, made for the call. */
  const handOn = isWellFormed(inProcess ? store.checkNow : store.checkBatch);
  const local = onStoreError === "local" ? createMemoryRateLimitStore() : undefined;
  const remembered = assertCount(options.refusalMemory ?? DEFAULT_REFUSALS, 0, "refusalMemory");
  if (remembered > 1_000_000) throw new TypeError("refusalMemory must be at most 1000000");
  const refusals = inProcess || remembered === 0 ? undefined : new Refusals(remembered);
  const does = onStoreError === "open"
    ? "requests pass"
    : onStoreError === "closed"
    ? "requests are refused (503)"
    : `each policy is enforced per instance at limit / ${instances}, credit spends are refused`;
  log(info)(
    `rate-limits: ${storeName} store; onStoreError "${onStoreError}": when it fails or takes ` +
      `over ${timeoutMs} ms, ${does}`,
  );

  const policyAnswer = (reason: "timeout" | "error"): RateLimitResult =>
    Object.freeze({
      allowed: onStoreError === "open",
      unavailable: true,
      outcome: onStoreError,
      reason,
      policies: NO_POLICIES,
    });
  const unanswered = { timeout: policyAnswer("timeout"), error: policyAnswer("error") };

  /** The answer without the store: the failure policy, or this instance's share with `local`. */
  const withoutStore = (
    reason: "timeout" | "error",
    counters: readonly RateLimitCounter[],
    names: readonly string[],
    credits: boolean,
  ): RateLimitResult => {
    report.failure(reason);
    if (local === undefined || credits) return unanswered[reason];
    const shares = counters.map((c) =>
      c.kind === "window" ? { ...c, limit: Math.floor(c.limit / instances) } : c
    );
    const answer = local.checkNow(shares);
    return {
      allowed: answer.every((r) => r.allowed),
      unavailable: true,
      outcome: "local",
      reason,
      policies: names.map((name, i) => ({
        name,
        limit: (shares[i] as { limit: number }).limit,
        windowMs: (shares[i] as { windowMs: number }).windowMs,
        remaining: answer[i].remaining,
        resetMs: answer[i].resetMs,
        allowed: answer[i].allowed,
      })),
    };
  };

  /** The result of a check from the store's answer (or the failure policy's, when unanswered). */
  const resultOf = (
    answer: readonly CounterResult[] | Unanswered,
    compiled: readonly CompiledRateLimitPolicy[],
    counters: readonly RateLimitCounter[],
    credits: boolean,
  ): RateLimitResult => {
    if (answer instanceof Unanswered) {
      return withoutStore(answer.reason, counters, compiled.map((p) => p.name), credits);
    }
    report.answered();
    let results: RateLimitPolicyResult[];
    let allowed = true;
    if (handOn) {
      // Made for this call (`isWellFormed`): handed on, or split without a copy when all balances.
      results = (credits
        ? compiled.length === 0 ? NO_POLICIES : answer.slice(0, compiled.length)
        : answer) as RateLimitPolicyResult[];
      for (let i = 0; i < compiled.length; i++) {
        if (!answer[i].allowed) {
          allowed = false;
        }
      }
    } else {
      results = new Array(compiled.length);
      for (let i = 0; i < compiled.length; i++) {
        const r = answer[i];
        const { name, limit, windowMs } = compiled[i];
        results[i] = {
          name,
          limit,
          windowMs,
          remaining: r.remaining,
          resetMs: r.resetMs,
          allowed: r.allowed,
        };
        if (!r.allowed) allowed = false;
      }
    }
    for (let i = compiled.length; i < answer.length; i++) if (!answer[i].allowed) allowed = false;
    if (!credits) return { allowed, unavailable: false, outcome: "store", policies: results };
    const balances = handOn && compiled.length === 0 ? answer : answer.slice(compiled.length); // validated by the door
    return {
      allowed,
      unavailable: false,
      outcome: "store",
      policies: results,
      credits: balances[0],
      balances,
    };
  };

  /** `run` through the door within `timeoutMs`; an Error naming the store when unanswered. */
  const call = async <T>(what: string, run: (deadline: number) => Promise<T | null>) => {
    const answer = await door.call(run, performance.now());
    if (answer instanceof Unanswered) throw unansweredError(storeName, what, answer, timeoutMs);
    return answer;
  };

  const drainStore = store.drainCreditChanges;
  /** Whether the store's `changeCredits` takes `{ anchor: true }` (read once, as its methods are). */
  const anchors = store.anchorsCredits === true;
  /** Store calls of drains and credit changes made so far, in order (each call's number). */
  let creditCalls = 0;
  /**
   * Drained balances no caller took yet (a drain answered late), by subject and name, each with
   * the number of the drain's call (a change called after it supersedes it).
   */
  const kept = new Map<string, { balance: CreditBalance; call: number }>();
  /** While a late drain is pending: the newest `at` answered per balance, so it brings none back older. */
  const answeredAt = new Map<string, number>();
  let lateDrains = 0;
  const balanceKey = (b: { subject: string; name: string }) => JSON.stringify([b.subject, b.name]);
  /** Keeps `balances` drained by call `drainCall` (the newest of each); a malformed list is a `TypeError`. */
  const keep = (balances: unknown, drainCall: number): true => {
    if (!Array.isArray(balances)) {
      throw malformed(storeName, "drainCreditChanges must answer a list");
    }
    for (const b of balances as CreditBalance[]) {
      if (
        typeof b?.subject !== "string" || typeof b.name !== "string" ||
        !Number.isFinite(b.remaining) || !Number.isFinite(b.at)
      ) throw malformed(storeName, "a drained balance is not { subject, name, remaining, at }");
      const key = balanceKey(b);
      const newest = Math.max(
        kept.get(key)?.balance.at ?? -Infinity,
        answeredAt.get(key) ?? -Infinity,
      );
      if (b.at >= newest) {
        const balance = { subject: b.subject, name: b.name, remaining: b.remaining, at: b.at };
        kept.set(key, { balance, call: drainCall });
      }
    }
    return true;
  };
  /** A drain through the door: what it drained is kept, even when it answers after its deadline. */
  const drain = async (): Promise<readonly CreditBalance[]> => {
    let sent = false;
    let settled = false;
    let late = false;
    /** The store read some balances and failed on others (kept, answered with the rejection). */
    let partial = false;
    const run = (deadline: number) => {
      sent = true;
      const drainCall = ++creditCalls;
      let drained: Promise<readonly CreditBalance[]>;
      try {
        drained = drainStore!.call(store, deadline);
      } catch (error) {
        drained = Promise.reject(error); // settles as a rejection: no drain left pending
      }
      return drained.then((read) => keep(read, drainCall), (error) => {
        const read = (error as { drained?: unknown })?.drained;
        if (read !== undefined) partial = keep(read, drainCall);
        throw error;
      }).finally(() => {
        settled = true;
        if (late && --lateDrains === 0) answeredAt.clear();
      });
    };
    try {
      await call("drainCreditChanges", run);
    } catch (error) {
      if (sent && !settled) {
        late = true;
        lateDrains++;
      }
      if (partial && !late && error !== null && typeof error === "object") {
        Object.assign(error, { drained: take() });
      }
      throw error;
    }
    return take();
  };
  /** The kept balances, answered (cleared; remembered while a late drain is pending). */
  const take = (): readonly CreditBalance[] => {
    const balances = [...kept.values()].map((k) => k.balance);
    kept.clear();
    if (lateDrains > 0) { for (const b of balances) answeredAt.set(balanceKey(b), b.at); }
    return balances;
  };

  /** `result`, reported to the telemetry taps (duration from `start`) and to the span `trace`. */
  const counted = (
    start: number,
    trace: CheckTrace | undefined,
    result: RateLimitResult,
  ): RateLimitResult => {
    taps.check?.(result.outcome, result.allowed, performance.now() - start);
    trace?.leave(result.outcome, result.allowed);
    return result;
  };

  /**
   * Checks validated and built from options that cannot change (see `unchanging`), by
   * options object: a caller passing the same frozen options, subject and compiled
   * policies on every request (the API-key service, per key) is validated once.
   */
  const prepared = new WeakMap<RateLimitCheckOptions, Prepared>();
  /** The options of `prepared` last found there, and their check. */
  let lastOptions: RateLimitCheckOptions | undefined;
  let lastPrepared: Prepared | undefined;

  /** The compiled policies last passed as such (frozen): passed again, they are not looked up. */
  let lastCompiled: readonly CompiledRateLimitPolicy[] | undefined;
  /** With this library's in-process store: its check of compiled policies, no counter built. */
  const checkPolicies = door.checkPolicies;
  /**
   * `run` of compiled policies without options, with this library's in-process store only (never
   * remote: no `later`): the store counts them as they are, no counter built.
   */
  const policiesNow = checkPolicies === undefined ? undefined : (
    subject: string,
    compiled: readonly CompiledRateLimitPolicy[],
    nowMs: number | undefined,
  ): RateLimitResult => {
    const trace = taps.enter?.();
    const began = taps.check !== undefined ? performance.now() : 0;
    const sent = checkPolicies(subject, compiled, nowMs, trace);
    const counters = sent instanceof Unanswered
      ? windowCounters(subject, compiled, undefined, undefined, undefined) // for `local`
      : NO_POLICIES;
    return counted(began, trace, resultOf(sent, compiled, counters, false));
  };

  /** Validates a check and builds its counters; kept when its inputs cannot change. */
  const prepare = (
    subject: string,
    policies: readonly RateLimitPolicy[],
    checkOptions: RateLimitCheckOptions,
  ): Prepared => {
    assertSubject(subject);
    assertKnownFields(checkOptions, CHECK_OPTIONS, "check", "option");
    const { credits } = checkOptions;
    const compiled = lastCompiled !== undefined && policies === lastCompiled
      ? lastCompiled
      : credits !== undefined && Array.isArray(policies) && policies.length === 0
      ? NO_POLICIES
      : compileRateLimitPolicies(policies);
    if (compiled === policies) lastCompiled = compiled;
    const cost = checkOptions.cost === undefined
      ? undefined
      : assertCost(checkOptions.cost, "cost");
    const subjects = checkOptions.subjects;
    if (subjects !== undefined && subjects.length !== compiled.length) {
      throw new TypeError("subjects must name one subject per policy");
    }
    // An index loop, not `forEach`: a hole is no subject (skipped, it would count every check apart).
    for (let i = 0; i < (subjects?.length ?? 0); i++) assertSubject(subjects![i]);
    const slot = checkOptions.slot === undefined ? undefined : assertSubject(checkOptions.slot);
    let counters: RateLimitCounter[];
    if (credits === undefined) {
      counters = windowCounters(subject, compiled, subjects, slot, cost);
    } else {
      if (cost !== undefined && cost > MAX_CREDITS) {
        throw new TypeError(`cost must be at most ${MAX_CREDITS} with credits`);
      }
      const balances = creditCounters(subject, credits, cost ?? 1, slot);
      // Balances only (a credits spend): their list is the check's, no copy.
      counters = compiled.length === 0
        ? balances
        : windowCounters(subject, compiled, subjects, slot, cost, balances);
    }
    if (clustered) assertOneTag(counters);
    const kept = checkOptions !== NO_OPTIONS &&
      (compiled === policies || (policies.length === 0 && Object.isFrozen(policies))) &&
      unchanging(checkOptions);
    const check = { subject, policies, compiled, counters, credits: credits !== undefined, kept };
    if (kept) {
      for (const counter of counters) Object.freeze(counter);
      Object.freeze(counters);
      prepared.set(checkOptions, check);
      lastOptions = checkOptions;
      lastPrepared = check;
    }
    return check;
  };

  /** A check (at `nowMs`: see `checkNow`): its answer, synchronous with an in-process store; throws a `TypeError` for bad input or a store bug. */
  const run = (
    subject: string,
    policies: readonly RateLimitPolicy[],
    checkOptions: RateLimitCheckOptions | undefined,
    nowMs?: number,
  ): RateLimitResult | Promise<RateLimitResult> => {
    // An in-process check has no deadline; a remote one's starts when the door reads the clock
    // (as it sends the check, or once for every check it queues in this task), and a tap times
    // it from there (one clock read).
    let counters: readonly RateLimitCounter[];
    let compiled: readonly CompiledRateLimitPolicy[];
    let credits = false;
    /** What identifies the check from call to call (its refusal can be remembered), if anything. */
    let kept: object | undefined;
    if (checkOptions === undefined && policies === lastCompiled && lastCompiled !== undefined) {
      // Compiled policies passed again without options (a limit per subject): nothing to look up.
      assertSubject(subject);
      if (policiesNow !== undefined) return policiesNow(subject, lastCompiled, nowMs);
      compiled = kept = lastCompiled;
      counters = windowCounters(subject, compiled, undefined, undefined, undefined);
    } else {
      // The options kept last, asked again (a key's requests in a row): no look-up.
      let check = checkOptions === undefined
        ? undefined
        : checkOptions === lastOptions
        ? lastPrepared
        : prepared.get(checkOptions);
      if (check === undefined || check.subject !== subject || check.policies !== policies) {
        check = prepare(subject, policies, checkOptions ?? NO_OPTIONS);
      } else {
        lastOptions = checkOptions;
        lastPrepared = check;
      }
      ({ counters, compiled, credits } = check);
      // Kept options, or compiled policies without options: the same check from call to call.
      if (check.kept) kept = check;
      else if (checkOptions === undefined && compiled === policies) kept = compiled;
    }
    const trace = taps.enter?.();
    if (!inProcess) {
      if (refusals === undefined) kept = undefined; // nothing is remembered
      else if (kept !== undefined) {
        const again = refusals.recall(subject, kept) as RateLimitResult | undefined;
        if (again !== undefined) return Promise.resolve(counted(performance.now(), trace, again));
      }
      return later(trace, counters, compiled, credits, subject, kept);
    }
    const began = taps.check !== undefined ? performance.now() : 0;
    const sent = door.check(counters, trace, nowMs) as readonly CounterResult[] | Unanswered;
    return counted(began, trace, resultOf(sent, compiled, counters, credits));
  };

  /**
   * A check the store answers later (apart from `run`: no closure per in-process check): its
   * result made as the door settles it (one promise per check), timed from the door's start;
   * a refusal of a `kept` check (see `run`) remembered for `subject`.
   */
  const later = (
    trace: CheckTrace | undefined,
    counters: readonly RateLimitCounter[],
    compiled: readonly CompiledRateLimitPolicy[],
    credits: boolean,
    subject: string,
    kept: object | undefined,
  ) =>
    door.check(
      counters,
      trace,
      undefined,
      (answer, start) => {
        const result = resultOf(answer, compiled, counters, credits);
        if (kept !== undefined && !result.allowed) {
          // Its resets count down from now, when the reply arrived (the store decided by then).
          refusals!.remember(subject, kept, start, result, performance.now());
        }
        return counted(start, trace, result);
      },
    ) as Promise<RateLimitResult>;

  const limiter: RateLimiter = {
    onStoreError,
    timeoutMs,
    store,
    ...(typeof drainStore !== "function"
      ? {}
      : { drainCreditChanges: drain, drainPending: () => lateDrains > 0 }),
    async ready() {
      if (typeof store.ready !== "function") return;
      const answer = await door.call(
        () => store.ready!(log(warn)).then(() => true),
        performance.now(),
      );
      if (!(answer instanceof Unanswered)) return;
      const why = answer.reason === "timeout"
        ? `no answer within ${timeoutMs} ms`
        : causeOf(answer.cause);
      log(warn)(
        `rate-limits: the ${storeName} store is unavailable at start-up (${why}); ` +
          `onStoreError "${onStoreError}" applies until it answers`,
      );
    },
    ...(inProcess
      ? {
        // `run` itself: an in-process store answers synchronously.
        checkNow: run as NonNullable<RateLimiter["checkNow"]>,
      }
      : {}),
    check(subject, policies, checkOptions) {
      try {
        // An in-process check settles without a turn of the microtask queue.
        const answer = run(subject, policies, checkOptions);
        return inProcess
          ? Promise.resolve(answer as RateLimitResult)
          : answer as Promise<RateLimitResult>;
      } catch (error) {
        return Promise.reject(error);
      }
    },
    async changeCredits(subject, credits, change) {
      assertSubject(subject);
      const counter = creditCounter(subject, credits, 0);
      const valid = compileCreditChange(change);
      const changeCredits = store.changeCredits;
      if (typeof changeCredits !== "function") {
        throw new TypeError(`the ${storeName} store cannot change credits`);
      }
      if ("anchor" in valid && !anchors) {
        // Never another change in its place: a balance read and set in two steps drops spends.
        throw new TypeError(
          `the ${storeName} store cannot keep a balance across a refill rule change ` +
            "(changeCredits { anchor: true } needs a store with anchorsCredits)",
        );
      }
      let called = 0;
      const answer = await call("changeCredits", (deadline) => {
        called = ++creditCalls;
        return changeCredits.call(store, counter, valid, deadline);
      });
      const result: CreditChangeResult = assertCounterResult(storeName, answer);
      const { before } = result;
      if (before !== undefined) {
        try {
          assertCredits(before, "before");
        } catch {
          throw malformed(storeName, "a credit change's before is not a balance");
        }
      }
      // A balance a drain called before this change read is older than it (the store drains it
      // again as changed, or, anchored, the caller writes the change back): never
      // answered after it. (One a drain called after it read stays.)
      const key = balanceKey(counter);
      if ((kept.get(key)?.call ?? Infinity) < called) kept.delete(key);
      return result;
    },
    async readCredits(balances) {
      if (!Array.isArray(balances) || balances.length === 0 || balances.length > 500) {
        throw new TypeError("readCredits takes a list of 1-500 balances");
      }
      const counters = balances.map((b) => creditCounter(assertSubject(b?.subject), b.credits, 0));
      const readCredits = store.readCredits;
      if (typeof readCredits !== "function") {
        throw new TypeError(`the ${storeName} store cannot read credits`);
      }
      const answer = await call("readCredits", () => readCredits.call(store, counters));
      if (!Array.isArray(answer) || answer.length !== counters.length) {
        throw malformed(storeName, `readCredits must list ${counters.length} answers`);
      }
      // A remote store on its server's clock: this one is its nearest reading (an in-process
      // store on another clock answers every balance itself).
      const now = Date.now();
      return answer.map((read, i) => {
        if (read !== null) return assertCounterResult(storeName, read);
        const c = counters[i];
        const settled = settleBalance(c.initial, c.initialAt ?? now, c.refill, now);
        return { allowed: true, remaining: settled.credits, resetMs: settled.resetMs };
      });
    },
  };
  registerTaps(limiter, taps);
  return limiter;
}
