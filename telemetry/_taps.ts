/**
 * The library's internal reports for the OpenTelemetry bridge (`./telemetry`):
 * each component keeps one taps object per instance, every tap unset (one
 * property read on the hot path) until the bridge sets it. Imports nothing.
 *
 * @module
 */

/**
 * What ends a call's span as the call settles: nothing when it succeeded, else its bounded
 * `error.type`: `"timeout"` for a call given up on at its deadline, else the error's name
 * (`errorNameOf`, never its message).
 */
export type Settled = (errorType?: string) => void;

/** Taps of an `ApiKeysService`. */
export interface ApiKeyTaps {
  /** One per `authorize`: its outcome, environment and tenant when known, duration in ms. */
  authorization?: (
    outcome: string,
    environment: string | undefined,
    tenantId: string | undefined,
    ms: number,
  ) => void;
  /** One per verify with a cache: `hit`, `negative_hit` (a cached refusal) or `miss`. */
  cache?: (result: "hit" | "negative_hit" | "miss") => void;
  /** One per authorization that spent credits: the cost, how many balances it left at 0 (own, pool). */
  credits?: (spent: number, exhausted: number, tenantId: string) => void;
  /** One per usage-flush report (the `api_key.usage_flush` metric's outcome and rows). */
  usageFlush?: (outcome: string, rows: number) => void;
  /**
   * At a storage lookup's, a `lastUsedAt` write's or a usage write's start (`rows`); answers what
   * to call when it settles.
   */
  span?: (
    name: "api_key.storage.lookup" | "api_key.storage.touch" | "api_key.usage.write",
    rows?: number,
  ) => Settled | undefined;
}

/** Taps of a `RateLimiter`. */
export interface LimiterTaps {
  /** One per `check`: who answered (`store`, `open`, `closed`, `local`), allowed, ms. */
  check?: (outcome: string, allowed: boolean, ms: number) => void;
  /** One per settled store call: its ms, the checks it carried, its `error.type` if it failed. */
  storeCall?: (ms: number, checks: number, errorType?: string) => void;
  /** One per check the store did not answer. */
  unavailable?: (reason: "timeout" | "error") => void;
  /** At a check's start: its span, ended through the token (a `close()` meanwhile ends it too). */
  enter?: () => CheckTrace | undefined;
  /** At a store call's start: the tokens of its checks; answers what to call when it settles. */
  batch?: (
    tokens: readonly (CheckTrace | undefined)[],
    checks: number,
  ) => Settled | undefined;
}

/** A check's span, from `LimiterTaps.enter`: one of its two ends is called once. */
export interface CheckTrace {
  /** At the check's answer: who answered, allowed. */
  leave(outcome: string, allowed: boolean): void;
  /** At the check's throw instead (a store bug, a malformed reply): the error's name. */
  fail(errorType: string): void;
}

/** Taps of a safe-response responder. */
export interface ResponderTaps {
  /** One per response written, by its binding (through `Responder.written`): its HTTP status. */
  response?: (status: number) => void;
}

const TAPS = new WeakMap<object, object>();

/** Registers `taps` as `owner`'s (at construction). */
export function registerTaps(owner: object, taps: object): void {
  TAPS.set(owner, taps);
}

/** The taps registered for `owner`, if any. */
export function tapsOf<T extends object>(owner: unknown): T | undefined {
  return typeof owner === "object" && owner !== null ? TAPS.get(owner) as T | undefined : undefined;
}
