/**
 * The rate limiter: validates a check, asks the store once with every policy's
 * counter, bounds the wait by `timeoutMs`, and applies the failure policy.
 *
 * @module
 */
import { createMemoryRateLimitStore } from "./memory_store.ts";
import { assertCount, compileRateLimitPolicies, type RateLimitPolicy } from "./policy.ts";
import { assertSubject, type CounterResult, type RateLimitStore } from "./store.ts";

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
  /** Units this request counts on every policy (default: each policy's `cost`); 0 only checks. */
  cost?: number;
  /** One subject per policy, in order, in place of `check`'s `subject` (e.g. a tenant's shared counter beside a key's). */
  subjects?: readonly string[];
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
}

/** A rate limiter over one store. */
export interface RateLimiter {
  /** The failure policy in force. */
  readonly onStoreError: "open" | "closed";
  /**
   * Checks `subject` against every policy at once; all or nothing. Throws a
   * `TypeError` for a bad subject, policy or cost; never for a store failure.
   */
  check(
    subject: string,
    policies: readonly RateLimitPolicy[],
    options?: RateLimitCheckOptions,
  ): Promise<RateLimitResult>;
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

  const ask = async (counters: Parameters<RateLimitStore["check"]>[0]) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<typeof TIMEOUT>((resolve) => {
      timer = setTimeout(() => resolve(TIMEOUT), timeoutMs);
    });
    try {
      const answer = await Promise.race([store.check(counters), timeout]);
      if (answer === TIMEOUT) return "timeout";
      if (!Array.isArray(answer) || answer.length !== counters.length) return "error";
      return answer as readonly CounterResult[];
    } catch {
      return "error";
    } finally {
      clearTimeout(timer);
    }
  };

  return {
    onStoreError,
    async check(subject, policies, checkOptions = {}) {
      assertSubject(subject);
      const compiled = compileRateLimitPolicies(policies);
      const cost = checkOptions.cost === undefined
        ? undefined
        : assertCount(checkOptions.cost, 0, "cost");
      const subjects = checkOptions.subjects;
      if (subjects !== undefined && subjects.length !== compiled.length) {
        throw new TypeError("subjects must name one subject per policy");
      }
      subjects?.forEach(assertSubject);
      const counters = compiled.map((policy, i) => ({
        kind: "window" as const,
        subject: subjects?.[i] ?? subject,
        name: policy.name,
        limit: policy.limit,
        windowMs: policy.windowMs,
        cost: cost ?? policy.cost,
      }));
      const answer = await ask(counters);
      if (typeof answer === "string") {
        report(answer);
        return unavailable;
      }
      const results = answer.map((result, i) => ({
        name: compiled[i].name,
        limit: compiled[i].limit,
        remaining: result.remaining,
        resetMs: result.resetMs,
        allowed: result.allowed,
      }));
      return { allowed: results.every((r) => r.allowed), unavailable: false, policies: results };
    },
  };
}
