/**
 * The store contract: one call takes every counter of a request and applies
 * them atomically, all or nothing. Counters are a union by `kind`, so later
 * kinds (credits) join the same call without changing its shape.
 *
 * @module
 */

/**
 * A sliding-window counter: `cost` more units fit when the units accepted in
 * the last `windowMs` plus `cost` stay within `limit`.
 */
export interface WindowCounter {
  /** Counter kind. */
  readonly kind: "window";
  /** Whose counter (an API key id, a tenant, an IP): 1–512 characters, no control characters. */
  readonly subject: string;
  /** Policy name (see `RateLimitPolicy.name`). */
  readonly name: string;
  /** Units per window. */
  readonly limit: number;
  /** Window length in ms. */
  readonly windowMs: number;
  /** Units this request counts (0 checks without consuming). */
  readonly cost: number;
}

/** Any counter a store checks (today only `WindowCounter`). */
export type RateLimitCounter = WindowCounter;

/** One counter's answer, in the order the counters were given. */
export interface CounterResult {
  /** Whether this counter's `cost` fits. */
  readonly allowed: boolean;
  /** Units left in the window after this check (consumed only when every counter fits). */
  readonly remaining: number;
  /**
   * Allowed: ms until `remaining` next grows (0 when nothing is counted). Denied: ms
   * until this `cost` fits (`windowMs` when it exceeds `limit` and never fits).
   */
  readonly resetMs: number;
}

/**
 * A counter store. `check` applies all counters in one atomic step on the
 * store's own clock: when any counter does not fit, none consumes. It rejects
 * (never resolves partially) when the store cannot answer.
 */
export interface RateLimitStore {
  /** What the start-up line calls it (`memory`, `postgres`, `redis`). */
  readonly name?: string;
  /** Checks and, when all fit, consumes every counter; one round trip. */
  check(counters: readonly RateLimitCounter[]): Promise<readonly CounterResult[]>;
  /** Releases the store's own resources (never the client the caller passed in). */
  close?(): Promise<void> | void;
}

/** Most characters of a subject. */
export const MAX_SUBJECT_LENGTH = 512;

/** Throws a `TypeError` unless `subject` is 1–512 characters without control characters. */
export function assertSubject(subject: unknown): string {
  if (
    typeof subject !== "string" || subject.length === 0 || subject.length > MAX_SUBJECT_LENGTH
  ) {
    throw new TypeError(
      `rate-limit subject must be a string of 1-${MAX_SUBJECT_LENGTH} characters`,
    );
  }
  for (let i = 0; i < subject.length; i++) {
    const code = subject.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) {
      throw new TypeError("rate-limit subject must not contain control characters");
    }
  }
  return subject;
}
