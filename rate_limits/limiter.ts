/**
 * The rate limiter: validates a check, asks the store once with every policy's
 * counter and the credit balance, bounds the wait by `timeoutMs`, and applies the failure policy.
 *
 * @module
 */
import { createMemoryRateLimitStore } from "./memory_store.ts";
import {
  assertCount,
  assertName,
  compileRateLimitPolicies,
  type RateLimitPolicy,
} from "./policy.ts";
import {
  assertSubject,
  type CounterResult,
  type CreditChange,
  type CreditCounter,
  type CreditRefill,
  type RateLimitCounter,
  type RateLimitStore,
} from "./store.ts";
import { assertCreditChange, assertCredits, compileCreditRefill, MAX_CREDITS } from "./credits.ts";

/** Reported at most once per `metricIntervalMs` while the store fails or times out. */
export interface RateLimitMetric {
  /** Metric type. */
  type: "rate_limit.store_unavailable";
  /** The failure policy applied. */
  onStoreError: "open" | "closed";
  /** Failed checks since the previous report, this one included. */
  failures: number;
  /** Why the check that triggered this report failed. */
  reason: "timeout" | "error";
}

/** Options of `createRateLimiter`. */
export interface RateLimiterOptions {
  /** Where counters live (default: a new in-memory store). */
  store?: RateLimitStore;
  /** When the store fails or times out: `"open"` lets requests pass (default), `"closed"` refuses them. */
  onStoreError?: "open" | "closed";
  /** Longest wait on the store, in ms (1–60,000; default 50). */
  timeoutMs?: number;
  /** Metric sink (sync or async; a throw or rejection goes to `onMetricError`). */
  onMetric?: (metric: RateLimitMetric) => void | Promise<void>;
  /** Receives errors of `onMetric` (default: one console warning, then silence). */
  onMetricError?: (error: unknown, metric: RateLimitMetric) => void;
  /** Least ms between two `rate_limit.store_unavailable` reports (default 10,000). */
  metricIntervalMs?: number;
  /** Receives the start-up line (default `console.info`). */
  logger?: (line: string) => void;
}

/** Options of one check. */
export interface RateLimitCheckOptions {
  /** Units this request counts on every policy and spends of `credits` (default: each policy's `cost`, 1 credit); 0 only checks. */
  cost?: number;
  /** One subject per policy, in order, in place of `check`'s `subject` (e.g. a tenant's shared counter beside a key's). */
  subjects?: readonly string[];
  /** A credit balance to spend from in the same atomic step as the policies. */
  credits?: RateLimitCredits;
}

/** The credit balance of a check: a `CreditCounter` without `kind` and `cost`; `subject` defaults to the check's, `name` to `credits`. */
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
}

/** One policy's answer. */
export interface RateLimitPolicyResult extends CounterResult {
  /** Policy name. */
  readonly name: string;
  /** Policy limit. */
  readonly limit: number;
}

/** The answer of `check`. */
export interface RateLimitResult {
  /** Whether the request may proceed. */
  readonly allowed: boolean;
  /** The store failed or timed out: `allowed` is the failure policy's answer and `policies` is empty. */
  readonly unavailable: boolean;
  /** Each policy's answer, in the order given. */
  readonly policies: readonly RateLimitPolicyResult[];
  /** The balance's answer when the check named `credits` and the store answered. */
  readonly credits?: CounterResult;
}

/** A rate limiter over one store. */
export interface RateLimiter {
  /** The failure policy in force. */
  readonly onStoreError: "open" | "closed";
  /** The store checked (the API-key service writes a Redis store's balances back through it). */
  readonly store: RateLimitStore;
  /**
   * Checks `subject` against every policy and `options.credits` at once; all or
   * nothing (`policies` may be empty when `credits` is given). Throws a
   * `TypeError` for a bad subject, policy, cost or credits; never for a store failure.
   */
  check(
    subject: string,
    policies: readonly RateLimitPolicy[],
    options?: RateLimitCheckOptions,
  ): Promise<RateLimitResult>;
  /**
   * Sets or adds to the balance `credits` names (its refill due applied first),
   * atomically with concurrent spends. Throws a `TypeError` for bad input or a
   * store without `changeCredits`; rejects when the store fails.
   */
  changeCredits(
    subject: string,
    credits: RateLimitCredits,
    change: CreditChange,
  ): Promise<CounterResult>;
}

/** The credit counter of `credits` for `subject`; a `TypeError` names the bad field. */
function creditCounter(subject: string, credits: RateLimitCredits, cost: number): CreditCounter {
  if (typeof credits !== "object" || credits === null) {
    throw new TypeError("credits must be an object");
  }
  const { initialAt } = credits;
  if (initialAt !== undefined && assertCount(initialAt, 0, "credits.initialAt") > 8.64e15) {
    throw new TypeError("credits.initialAt must be at most 8640000000000000");
  }
  const refill = compileCreditRefill(credits.refill);
  return {
    kind: "credit",
    subject: credits.subject === undefined ? subject : assertSubject(credits.subject),
    name: credits.name === undefined ? "credits" : assertName(credits.name, "credits.name"),
    cost,
    initial: assertCredits(credits.initial, "credits.initial"),
    ...(initialAt === undefined ? {} : { initialAt }),
    ...(refill === undefined ? {} : { refill }),
  };
}

const TIMEOUT = Symbol("timeout");

/** Calls `fn(...args)`; a throw or rejection goes to `onFailure`. Never throws. */
function contained<A extends unknown[]>(
  fn: (...args: A) => unknown,
  args: A,
  onFailure: (error: unknown) => void,
): void {
  try {
    Promise.resolve(fn(...args)).catch(onFailure);
  } catch (error) {
    onFailure(error);
  }
}

/** The metric reporter: at most one report per interval, failures counted between. */
function metricReporter(options: RateLimiterOptions, policy: "open" | "closed") {
  const interval = assertCount(options.metricIntervalMs ?? 10_000, 0, "metricIntervalMs");
  const sink = options.onMetric;
  let failures = 0;
  let last = -Infinity;
  let warned = false;
  const onError = (metric: RateLimitMetric) => (error: unknown) => {
    if (options.onMetricError) {
      contained(options.onMetricError, [error, metric], () => {});
    } else if (!warned) {
      warned = true;
      console.warn(`rate-limits: onMetric failed (${(error as Error)?.name ?? typeof error})`);
    }
  };
  return (reason: RateLimitMetric["reason"]) => {
    failures++;
    const now = performance.now();
    if (sink === undefined || now - last < interval) return;
    last = now;
    const metric: RateLimitMetric = {
      type: "rate_limit.store_unavailable",
      onStoreError: policy,
      failures,
      reason,
    };
    failures = 0;
    contained(sink, [metric], onError(metric));
  };
}

/**
 * Creates a rate limiter. Prints one start-up line naming the store and the
 * failure policy. Throws a `TypeError` for a bad option.
 *
 * @example
 * ```ts
 * import { createRateLimiter } from "./limiter.ts";
 * const limiter = createRateLimiter({ onStoreError: "open", timeoutMs: 50 });
 * const result = await limiter.check("key_1", [{ name: "api", limit: 100, windowMs: 60_000 }]);
 * if (!result.allowed) console.log(result.unavailable ? 503 : 429);
 * ```
 */
export function createRateLimiter(options: RateLimiterOptions = {}): RateLimiter {
  const store = options.store ?? createMemoryRateLimitStore();
  const onStoreError = options.onStoreError ?? "open";
  if (onStoreError !== "open" && onStoreError !== "closed") {
    throw new TypeError('onStoreError must be "open" or "closed"');
  }
  const timeoutMs = assertCount(options.timeoutMs ?? 50, 1, "timeoutMs");
  if (timeoutMs > 60_000) throw new TypeError("timeoutMs must be at most 60000");
  const report = metricReporter(options, onStoreError);
  const unavailable: RateLimitResult = Object.freeze({
    allowed: onStoreError === "open",
    unavailable: true,
    policies: Object.freeze([]),
  });
  contained(options.logger ?? console.info, [
    `rate-limits: ${store.name ?? "custom"} store; onStoreError "${onStoreError}": when it ` +
    `fails or takes over ${timeoutMs} ms, requests ${
      onStoreError === "open" ? "pass" : "are refused (503)"
    }`,
  ], () => {});

  const shaped = (answer: unknown, counters: readonly RateLimitCounter[]) =>
    Array.isArray(answer) && answer.length === counters.length
      ? answer as readonly CounterResult[]
      : "error";
  const checkNow = typeof store.checkNow === "function" ? store.checkNow.bind(store) : undefined;
  const ask = async (counters: readonly RateLimitCounter[]) => {
    if (checkNow !== undefined) {
      try {
        return shaped(checkNow(counters), counters);
      } catch {
        return "error";
      }
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<typeof TIMEOUT>((resolve) => {
      timer = setTimeout(() => resolve(TIMEOUT), timeoutMs);
    });
    try {
      const answer = await Promise.race([store.check(counters), timeout]);
      return answer === TIMEOUT ? "timeout" : shaped(answer, counters);
    } catch {
      return "error";
    } finally {
      clearTimeout(timer);
    }
  };

  return {
    onStoreError,
    store,
    async check(subject, policies, checkOptions = {}) {
      assertSubject(subject);
      const { credits } = checkOptions;
      const compiled = credits !== undefined && Array.isArray(policies) && policies.length === 0
        ? []
        : compileRateLimitPolicies(policies);
      const cost = checkOptions.cost === undefined
        ? undefined
        : assertCount(checkOptions.cost, 0, "cost");
      const subjects = checkOptions.subjects;
      if (subjects !== undefined && subjects.length !== compiled.length) {
        throw new TypeError("subjects must name one subject per policy");
      }
      subjects?.forEach(assertSubject);
      const counters: RateLimitCounter[] = compiled.map((policy, i) => ({
        kind: "window" as const,
        subject: subjects?.[i] ?? subject,
        name: policy.name,
        limit: policy.limit,
        windowMs: policy.windowMs,
        cost: cost ?? policy.cost,
      }));
      if (credits !== undefined) {
        if (cost !== undefined && cost > MAX_CREDITS) {
          throw new TypeError(`cost must be at most ${MAX_CREDITS} with credits`);
        }
        counters.push(creditCounter(subject, credits, cost ?? 1));
      }
      const answer = await ask(counters);
      if (typeof answer === "string") {
        report(answer);
        return unavailable;
      }
      const results = compiled.map((policy, i) => ({
        name: policy.name,
        limit: policy.limit,
        remaining: answer[i].remaining,
        resetMs: answer[i].resetMs,
        allowed: answer[i].allowed,
      }));
      const allowed = answer.every((r) => r.allowed);
      if (credits === undefined) return { allowed, unavailable: false, policies: results };
      const { allowed: ok, remaining, resetMs } = answer[compiled.length];
      return {
        allowed,
        unavailable: false,
        policies: results,
        credits: { allowed: ok, remaining, resetMs },
      };
    },
    changeCredits(subject, credits, change) {
      assertSubject(subject);
      const counter = creditCounter(subject, credits, 0);
      const valid = assertCreditChange(change);
      if (typeof store.changeCredits !== "function") {
        throw new TypeError(`the ${store.name ?? "custom"} store cannot change credits`);
      }
      return store.changeCredits(counter, valid);
    },
  };
}
