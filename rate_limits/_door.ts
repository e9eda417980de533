/**
 * The one door to a store: every store call of a limiter goes through it. An
 * in-process store (`checkNow`) is called synchronously. For a remote store,
 * a check reaching an idle door (nothing queued, nothing in flight) is sent at
 * once; the others are queued and sent as batches (`checkBatch`) at the end of
 * the task, with at most `MAX_IN_FLIGHT` calls in flight and `MAX_BATCH` checks
 * per call; each check carries its deadline, and one that is not answered by it
 * is `Unanswered`.
 *
 * - A queued check whose deadline passes leaves the queue unsent (one timer,
 *   `_watchdog.ts`, for every deadline of the door), so memory stays bounded during a stall: calls
 *   holding a slot ≤ `MAX_IN_FLIGHT`, queued checks ≤ those of one `timeoutMs`. A call that has not
 *   settled `SETTLE_MS` after its last answer is let go of: it frees its slot (a lost connection
 *   never holds the door; the store needs no wait of its own), and its late reply changes nothing.
 *   At most `MAX_LET_GO` calls let go of are unsettled; past that, a call keeps its slot until it
 *   or one of them settles, so a stall of any length leaves at most `MAX_IN_FLIGHT + MAX_LET_GO`
 *   pending calls, and queued checks are answered by the failure policy at their deadline. Either
 *   way, a call unsettled at `SETTLE_MS` is reported then (`observe`, its span: a `timeout`), once.
 * - The store gets each deadline `replyMarginMs` before the limiter answers,
 *   and promises not to decide a check past it: a check answered `Unanswered`
 *   is not applied afterwards (but for a reply lost or a commit landing after
 *   the answer: docs/rate-limits.md, "The deadline"), and nothing is replayed.
 * - Classification (see `RateLimitStore`): a store's `TypeError` (or other
 *   programming error) and a malformed reply are thrown as a `TypeError`
 *   naming the store and the cause; any other rejection, a late reply and a
 *   `null` result are `Unanswered` (the failure policy's business).
 * - A `clustered` store's batch holds the checks of one slot only: a run of
 *   queued checks of the same slot, in order.
 *
 * @module
 */
import { errorMessageOf, errorNameOf, isBug } from "../telemetry/_error_name.ts";
import type { CheckTrace, LimiterTaps } from "../telemetry/_taps.ts";
import type { CounterResult, RateLimitCounter, RateLimitStore, StoreCheck } from "./store.ts";
import { type Watch, Watchdog } from "./_watchdog.ts";
import { isWellFormed, policyCheckOf } from "./_well_formed.ts";
import type { CompiledRateLimitPolicy } from "./policy.ts";

/** Most store calls in flight per limiter. */
export const MAX_IN_FLIGHT = 4;
/** Most checks per `checkBatch` call. */
export const MAX_BATCH = 500;
/** Ms past its last answer after which a call that has not settled is let go of (frees its slot). */
export const SETTLE_MS = 2_000;
/**
 * Most calls let go of that have not settled yet: past it, a call holds its slot until it
 * settles or a call let go of does (so at most `MAX_IN_FLIGHT + MAX_LET_GO` calls are pending).
 */
export const MAX_LET_GO = MAX_IN_FLIGHT;

/** Why the store did not answer: `timeout` (no reply by the deadline, or `null`) or `error` (it rejected). */
export type UnansweredReason = "timeout" | "error";

/** A store call the store did not answer; `cause` is its rejection. */
export class Unanswered {
  /** Why. */
  readonly reason: UnansweredReason;
  /** The store's rejection (with `error`). */
  readonly cause?: unknown;
  /**
   * @example
   * ```ts
   * import { Unanswered } from "./_door.ts";
   * new Unanswered("timeout").reason; // "timeout"
   * ```
   */
  constructor(reason: UnansweredReason, cause?: unknown) {
    this.reason = reason;
    if (cause !== undefined) this.cause = cause;
  }
}

const TIMED_OUT = new Unanswered("timeout");

/**
 * Ms between the deadline a store gets and the moment the limiter answers
 * without it: half of `timeoutMs`, at most 100 ms (room for a batch's later
 * checks, its commit and its reply after a check is applied just in time; a
 * tenth of a short `timeoutMs` left a few ms).
 *
 * @example
 * ```ts
 * import { replyMarginMs } from "./_door.ts";
 * replyMarginMs(1_000); // 100
 * ```
 */
export function replyMarginMs(timeoutMs: number): number {
  return Math.min(100, Math.floor(timeoutMs / 2));
}

/**
 * A store's error as `name: message` for lines and errors (`errorNameOf`,
 * `errorMessageOf`: bounded, `unknown` for what cannot be read). Never throws.
 */
export function causeOf(error: unknown): string {
  return `${errorNameOf(error)}: ${errorMessageOf(error)}`;
}

/** The `TypeError` a store's bug becomes, naming the store and the cause. */
export function storeFault(storeName: string, error: unknown): TypeError {
  return new TypeError(`rate-limits: the ${storeName} store failed (${causeOf(error)})`, {
    cause: error,
  });
}

/** The problem of a reply that throws as it is read (a getter, a proxy): never thrown on. */
const unreadable = (error: unknown) => `it throws as it is read: ${causeOf(error)}`;

/** What is wrong with `answer` as the answers of `n` counters (`undefined`: nothing); never throws. */
function counterProblem(answer: unknown, n: number): string | undefined {
  try {
    if (!Array.isArray(answer) || answer.length !== n) return `not a list of ${n} counter answers`;
    for (const r of answer) {
      if (
        typeof r !== "object" || r === null || typeof r.allowed !== "boolean" ||
        !Number.isFinite(r.remaining) || !Number.isFinite(r.resetMs)
      ) return "a counter answer is not { allowed, remaining, resetMs }";
    }
    return undefined;
  } catch (error) {
    return unreadable(error);
  }
}

/** A `TypeError` for a malformed reply of `storeName`. */
export function malformed(storeName: string, problem: string): TypeError {
  return new TypeError(
    `rate-limits: the ${storeName} store answered a malformed reply (${problem})`,
  );
}

/** Throws `malformed` unless `answer` is one `CounterResult` (or `null` when `nullable`). */
export function assertCounterResult(
  storeName: string,
  answer: unknown,
): CounterResult {
  const problem = counterProblem([answer], 1);
  if (problem !== undefined) throw malformed(storeName, problem);
  return answer as CounterResult;
}

/** A check or another store call waiting for, or in, a store call. */
interface Entry {
  /** Last moment to send it, `performance.now()` ms (the store's deadline; NaN until stamped). */
  sendBy: number;
  /** When the limiter answers without the store, `performance.now()` ms (NaN until stamped). */
  answerAt: number;
  /** A check's counters (absent for another call). */
  readonly counters?: readonly RateLimitCounter[];
  /** Another call. */
  readonly run?: (deadline: number) => unknown;
  /** The telemetry bridge's token of the check (its span), if any. */
  readonly trace?: CheckTrace;
  /** What the answer becomes before the promise settles (a check's `then`, given its start). */
  readonly then?: (answer: never, startMs: number) => unknown;
  done: boolean;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** The door of one store. */
export interface StoreDoor {
  /** What the store is called in lines and errors. */
  readonly storeName: string;
  /**
   * Checks `counters`: their answers, or `Unanswered`. With a remote store, the check starts
   * (its deadline counts) at the door's clock read, as it is sent at once or at the end of the
   * current task (one read for every check queued in it). Synchronous with `checkNow` (given
   * `nowMs`, the caller's wall-clock time for it). Throws (or rejects with) a `TypeError` for
   * a store bug or a malformed reply. With a remote store, `then` maps the answer before the
   * promise settles (one promise per check; a throw of `then` rejects it), given the check's
   * start (the door's clock read: a caller timing the check reads no clock of its own).
   */
  check<R = readonly CounterResult[] | Unanswered>(
    counters: readonly RateLimitCounter[],
    trace?: CheckTrace,
    nowMs?: number,
    then?: (answer: readonly CounterResult[] | Unanswered, startMs: number) => R,
  ): readonly CounterResult[] | Unanswered | Promise<R>;
  /**
   * With this library's in-process store (absent otherwise): `check` of the window counters
   * of compiled `policies` for `subject`, each counting its policy's cost, built by nobody.
   */
  readonly checkPolicies?: (
    subject: string,
    policies: readonly CompiledRateLimitPolicy[],
    nowMs?: number,
    trace?: CheckTrace,
  ) => readonly CounterResult[] | Unanswered;
  /**
   * Runs one other store call (`run(deadline)`) through the same slots and
   * deadline: its value, or `Unanswered` (a `null` value is `timeout`).
   * Rejects with a `TypeError` for a store bug.
   */
  call<T>(
    run: (deadline: number) => T | null | Promise<T | null>,
    startMs: number,
  ): Promise<T | Unanswered>;
}

/**
 * Creates the door of `store`: `timeoutMs` after a call starts, it is
 * answered without the store; `observe` receives, once per store call, as it settles or when
 * it has not `SETTLE_MS` after its last answer, its start (`performance.now()` ms: the observer
 * reads the clock only if it needs the duration), number of checks and, if it failed, its
 * `error.type` (`"timeout"` when unsettled at `SETTLE_MS`, else the error's name); `taps.batch`
 * (the telemetry bridge's) each call's start, with the tokens of the checks it carries (what it
 * answers is called at the same moment as `observe`); a check that throws (a store bug, a
 * malformed reply) ends its token's span as an error (`fail`).
 *
 * @example
 * ```ts
 * import { createStoreDoor } from "./_door.ts";
 * import { createMemoryRateLimitStore } from "./memory_store.ts";
 * const door = createStoreDoor(createMemoryRateLimitStore(), 1_000);
 * door.check([{ kind: "window", subject: "k", name: "api", limit: 2, windowMs: 1_000, cost: 1 }]);
 * ```
 */
export function createStoreDoor(
  store: RateLimitStore,
  timeoutMs: number,
  observe: (sentAt: number, checks: number, errorType?: string) => void = () => {},
  taps: LimiterTaps = {},
): StoreDoor {
  const storeName = store.name ?? "custom";
  const margin = replyMarginMs(timeoutMs);
  const clustered = store.clustered === true;
  const checkNow = typeof store.checkNow === "function" ? store.checkNow.bind(store) : undefined;
  const wellFormed = isWellFormed(checkNow === undefined ? store.checkBatch : store.checkNow);
  const checkPolicies = checkNow === undefined ? undefined : policyCheckOf(store.checkNow);
  const queue: Entry[] = [];
  /** Queued entries without a start yet: the next `pump` stamps them with its clock read. */
  const fresh: Entry[] = [];
  let head = 0;
  let inFlight = 0;
  /** Calls let go of that have not settled (at most `MAX_LET_GO`). */
  let letGo = 0;
  /** Calls past `SETTLE_MS` kept in their slot (`letGo` at `MAX_LET_GO`), oldest first: their letting go. */
  const overdue = new Set<() => void>();
  let scheduled = false;
  /** Every deadline of this door (queued and in-flight entries) on one timer. */
  const watchdog = new Watchdog(() => performance.now());
  let queueWatch: Watch | undefined;
  let queueWatchAt = Infinity;

  /** `error`, once the span of the check `trace` (the telemetry bridge's token) ends as an error. */
  const failing = (trace: CheckTrace | undefined, error: unknown) => {
    trace?.fail(errorNameOf(error));
    return error;
  };
  const finish = (entry: Entry, value: unknown) => {
    if (entry.done) return;
    entry.done = true;
    const then = entry.then as ((answer: unknown, startMs: number) => unknown) | undefined;
    if (then === undefined) return entry.resolve(value);
    let mapped: unknown;
    try {
      mapped = then(value, entry.answerAt - timeoutMs);
    } catch (error) {
      return entry.reject(failing(entry.trace, error));
    }
    entry.resolve(mapped);
  };
  const fail = (entry: Entry, error: unknown) => {
    if (entry.done) return;
    entry.done = true;
    entry.reject(failing(entry.trace, error));
  };

  /** The slot of a check (its first counter's), for a clustered store's one slot per call. */
  const slotOf = (entry: Entry) => {
    const first = entry.counters?.[0];
    return first?.slot ?? first?.subject;
  };

  /** Answers the queued entries past their deadline. */
  const dropExpired = (now: number) => {
    while (head < queue.length && (queue[head].done || now >= queue[head].sendBy)) {
      finish(queue[head++], TIMED_OUT);
    }
    if (head === queue.length) {
      queue.length = head = 0;
    } else if (head > 1_024 && head * 2 > queue.length) {
      queue.splice(0, head);
      head = 0;
    }
  };

  /** Watches the deadline of the queue's first entry (none when the queue is empty). */
  const watchQueue = () => {
    if (head === queue.length) {
      watchdog.cancel(queueWatch);
      queueWatch = undefined;
      queueWatchAt = Infinity;
      return;
    }
    const at = queue[head].sendBy;
    if (queueWatch !== undefined && queueWatchAt <= at) return;
    watchdog.cancel(queueWatch);
    queueWatchAt = at;
    queueWatch = watchdog.watch(at, () => {
      queueWatch = undefined;
      queueWatchAt = Infinity;
      pump();
    });
  };

  /**
   * Answers `batch` with the store's `answer`: the call's `error.type` when it was malformed (the
   * call failed), else nothing.
   */
  const deliver = (batch: Entry[], answer: unknown): string | undefined => {
    const op = batch[0].run !== undefined;
    if (op) {
      finish(batch[0], answer === null ? TIMED_OUT : answer);
      return undefined;
    }
    const results = (answer as { results?: unknown } | undefined)?.results;
    if (!Array.isArray(results) || results.length !== batch.length) {
      const error = malformed(storeName, `results must list ${batch.length} answers`);
      for (const entry of batch) fail(entry, error);
      return errorNameOf(error);
    }
    let bad: string | undefined;
    for (let i = 0; i < batch.length; i++) {
      const entry = batch[i];
      const result = results[i];
      const problem = result === null || wellFormed
        ? undefined
        : counterProblem(result, entry.counters!.length);
      if (problem === undefined) {
        if (entry.done) continue; // answered without the store; the store did not apply it after
        finish(entry, result === null ? TIMED_OUT : result);
        continue;
      }
      const error = malformed(storeName, problem);
      bad = errorNameOf(error); // the call failed, even for an entry answered already
      fail(entry, error);
    }
    return bad;
  };

  /**
   * Sends `batch` (at `sentAt`, `performance.now()` ms), its deadlines on the wall clock by
   * `wall` (`Date.now()` − `performance.now()`, both read at `sentAt`: a stepped clock neither
   * hangs a check nor lets a store apply it after its answer, and a pump's later batch, sent
   * after slow calls, gets no later deadline).
   */
  const send = (batch: Entry[], sentAt: number, wall: number) => {
    inFlight++;
    const traced = taps.batch?.(
      batch.map((e) => e.trace),
      batch[0].run === undefined ? batch.length : 0,
    );
    /** The call's `error.type` once it failed. */
    let failed: string | undefined;

    let call: Promise<unknown>;
    try {
      const first = batch[0];
      if (first.run !== undefined) {
        call = Promise.resolve(first.run(Math.floor(wall + first.sendBy)));
      } else {
        const checks: StoreCheck[] = new Array(batch.length);
        for (let i = 0; i < batch.length; i++) {
          const e = batch[i];
          checks[i] = { counters: e.counters!, deadline: Math.floor(wall + e.sendBy) };
        }
        call = Promise.resolve(store.checkBatch(checks));
      }
    } catch (error) {
      call = Promise.reject(error);
    }
    let late: Watch | undefined;
    /** Whether the call holds its slot (until it settles, or it is let go of). */
    let holding = true;
    /** Whether the call was reported (`traced`, `observe`): as it settles or at `SETTLE_MS`, once. */
    let reported = false;
    const report = () => {
      if (reported) return;
      reported = true;
      traced?.(failed);
      observe(sentAt, batch[0].run === undefined ? batch.length : 0, failed);
    };
    const free = () => {
      if (!holding) return;
      holding = false;
      watchdog.cancel(late);
      inFlight--;
      report();
      pump();
    };
    const letGoOf = () => {
      overdue.delete(letGoOf);
      letGo++;
      free();
    };
    /** Frees the slot as the call settles; one let go of settling lets go of the oldest overdue call. */
    const settled = () => {
      overdue.delete(letGoOf);
      if (holding) return free();
      letGo--;
      const [oldest] = overdue;
      oldest?.();
    };
    /**
     * Answers the entries past their answer; `SETTLE_MS` after the last one, reports the call as a
     * `timeout` and lets go of it (or, past `MAX_LET_GO`, marks it overdue: it keeps its slot).
     */
    const expire = () => {
      const now = performance.now();
      let next = Infinity;
      let last = -Infinity;
      for (const entry of batch) {
        if (entry.answerAt > last) last = entry.answerAt;
        if (entry.done) continue;
        if (now >= entry.answerAt) finish(entry, TIMED_OUT);
        else next = Math.min(next, entry.answerAt);
      }
      if (next === Infinity && now >= last + SETTLE_MS) {
        late = undefined;
        failed = "timeout";
        report();
        if (letGo < MAX_LET_GO) letGoOf();
        else overdue.add(letGoOf);
        return;
      }
      late = watchdog.watch(next === Infinity ? last + SETTLE_MS : next, expire);
    };
    late = watchdog.watch(batch[0].answerAt, expire);
    call.then(
      (answer) => {
        try {
          failed = deliver(batch, answer);
        } catch (error) { // its `results` throw as they are read: the batch is answered now
          const fault = malformed(storeName, unreadable(error));
          for (const entry of batch) fail(entry, fault);
          failed = errorNameOf(fault);
        } finally {
          settled();
        }
      },
      (error) => {
        failed = errorNameOf(error);
        const answer = isBug(error) ? undefined : new Unanswered("error", error);
        for (const entry of batch) {
          if (answer === undefined) fail(entry, storeFault(storeName, error));
          else finish(entry, answer);
        }
        settled();
      },
    );
  };

  /** Sends what the free slots take, in order: a run of checks as one batch, another call alone. */
  function pump() {
    scheduled = false;
    if (head === queue.length) { // nothing queued (a call settled): no clock read
      queue.length = head = 0;
      return watchQueue();
    }
    const now = performance.now();
    const wall = Date.now() - now;
    if (fresh.length > 0) {
      for (const entry of fresh) {
        entry.sendBy = now + timeoutMs - margin;
        entry.answerAt = now + timeoutMs;
      }
      fresh.length = 0;
    }
    dropExpired(now);
    while (inFlight < MAX_IN_FLIGHT && head < queue.length) {
      const batch: Entry[] = [];
      while (head < queue.length && batch.length < MAX_BATCH) {
        const entry = queue[head];
        if (entry.done || now >= entry.sendBy) {
          finish(queue[head++], TIMED_OUT);
          continue;
        }
        if (entry.run !== undefined && batch.length > 0) break;
        if (clustered && batch.length > 0 && slotOf(entry) !== slotOf(batch[0])) break;
        batch.push(queue[head++]);
        if (entry.run !== undefined) break;
      }
      if (batch.length > 0) send(batch, now, wall);
    }
    dropExpired(now);
    watchQueue();
  }

  /** Queues a check (`counters`, started at the door's clock read: `startMs` undefined) or another call (`run`) started at `startMs`. */
  const enqueue = (
    startMs: number | undefined,
    counters: readonly RateLimitCounter[] | undefined,
    run: ((deadline: number) => unknown) | undefined,
    trace: CheckTrace | undefined,
    then: ((answer: never, startMs: number) => unknown) | undefined,
  ): Promise<unknown> =>
    new Promise((resolve, reject) => {
      // Every field in one order: one shape for every entry.
      const entry: Entry = {
        sendBy: startMs === undefined ? NaN : startMs + timeoutMs - margin,
        answerAt: startMs === undefined ? NaN : startMs + timeoutMs,
        counters,
        run,
        trace,
        then,
        done: false,
        resolve,
        reject,
      };
      if (!scheduled && inFlight === 0 && head === queue.length) {
        // An idle door sends at once (no turn of the microtask queue); what the task adds
        // next goes together once it ends.
        const now = performance.now();
        if (startMs === undefined) {
          entry.sendBy = now + timeoutMs - margin;
          entry.answerAt = now + timeoutMs;
        }
        if (now < entry.sendBy) return send([entry], now, Date.now() - now);
      }
      queue.push(entry);
      if (startMs === undefined) fresh.push(entry);
      if (!scheduled) {
        scheduled = true;
        queueMicrotask(pump);
      }
    });

  /**
   * An in-process check's throw: a store bug thrown as a `TypeError` (the span of the check
   * `trace` ended as an error), else `Unanswered`.
   */
  const failedNow = (error: unknown, trace: CheckTrace | undefined) => {
    if (isBug(error)) throw failing(trace, storeFault(storeName, error));
    return new Unanswered("error", error);
  };

  return {
    storeName,
    ...(checkPolicies === undefined ? {} : {
      checkPolicies: (
        subject: string,
        policies: readonly CompiledRateLimitPolicy[],
        nowMs?: number,
        trace?: CheckTrace,
      ) => {
        try {
          return checkPolicies(subject, policies, nowMs);
        } catch (error) {
          return failedNow(error, trace);
        }
      },
    }),
    check<R>(
      counters: readonly RateLimitCounter[],
      trace?: CheckTrace,
      nowMs?: number,
      then?: (answer: readonly CounterResult[] | Unanswered, startMs: number) => R,
    ) {
      if (checkNow === undefined) {
        return enqueue(undefined, counters, undefined, trace, then) as Promise<R>;
      }
      let answer: unknown;
      try {
        answer = checkNow(counters, nowMs);
      } catch (error) {
        return failedNow(error, trace);
      }
      if (!wellFormed) {
        const problem = counterProblem(answer, counters.length);
        if (problem !== undefined) throw failing(trace, malformed(storeName, problem));
      }
      return answer as readonly CounterResult[];
    },
    call<T>(run: (deadline: number) => T | null | Promise<T | null>, startMs: number) {
      return enqueue(startMs, undefined, run, undefined, undefined) as Promise<T | Unanswered>;
    },
  };
}
