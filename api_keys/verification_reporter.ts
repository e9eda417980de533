/**
 * What a verify or authorize reports: the `api_key.verification` metric, the
 * `onAuthFailed` callback with `api_key.auth_failed`, and `api_key.used`.
 *
 * @module
 */
import { authError } from "./auth_error.ts";
import type { ApiKeyError, ApiKeyErrorCode } from "./errors.ts";
import type { ApiKeyEvent, ApiKeyVerificationMetric } from "./events.ts";
import { callDetached, type Dispatch, warnOnce } from "./sinks.ts";
import type { ApiKeyContext, ApiKeyVerificationOutcome, Environment } from "./types.ts";

/** What is known of the key at a failure (only after the secret matched). */
export interface KnownKey {
  /** Id of the key. */
  keyId: string;
  /** Tenant of the key. */
  tenantId: string;
  /** Environment of the key. */
  environment: Environment;
}

/** The sinks and clocks a `VerificationReporter` reports through. */
export interface VerificationReporterOptions {
  /** Event sink (`undefined`: events are not emitted). */
  emitEvent: Dispatch<ApiKeyEvent> | undefined;
  /** Metric sink (`undefined`: metrics are not emitted). */
  emitMetric: Dispatch<ApiKeyVerificationMetric> | undefined;
  /** Called with the prefix and code of each authentication failure (sync or async). */
  onAuthFailed: ((prefix: string | null, code: ApiKeyErrorCode) => unknown) | undefined;
  /** Wall clock of event times. */
  clock: () => Date;
  /** Monotonic clock (ms) of metric durations. */
  monotonic: () => number;
}

/** Reports verifications and authentication failures to the configured sinks. */
export class VerificationReporter {
  readonly #emitEvent: Dispatch<ApiKeyEvent> | undefined;
  readonly #emitMetric: Dispatch<ApiKeyVerificationMetric> | undefined;
  readonly #onAuthFailed: ((prefix: string | null, code: ApiKeyErrorCode) => unknown) | undefined;
  readonly #authFailedFailed = warnOnce("onAuthFailed");
  readonly #clock: () => Date;
  readonly #monotonic: () => number;

  /** Keeps the sinks and clocks of `options`. */
  constructor(options: VerificationReporterOptions) {
    this.#emitEvent = options.emitEvent;
    this.#emitMetric = options.emitMetric;
    this.#onAuthFailed = options.onAuthFailed;
    this.#clock = options.clock;
    this.#monotonic = options.monotonic;
  }

  /** Emits the one `api_key.verification` metric of a verify begun at `start`. */
  metric(start: number, outcome: ApiKeyVerificationOutcome, environment?: Environment): void {
    const emit = this.#emitMetric;
    if (emit === undefined) return;
    const metric: ApiKeyVerificationMetric = {
      type: "api_key.verification",
      outcome,
      durationMs: this.#monotonic() - start,
    };
    if (environment !== undefined) metric.environment = environment;
    emit(metric);
  }

  /** Reports a failed verify (metric, then auth failure) and returns the error to throw. */
  failure(
    start: number,
    outcome: ApiKeyVerificationOutcome,
    code: ApiKeyErrorCode,
    prefix: string | null,
    environment: Environment | undefined,
    known?: KnownKey,
  ): ApiKeyError {
    this.metric(start, outcome, environment);
    this.authFailed(prefix, code, known);
    return authError(code);
  }

  /**
   * Calls `onAuthFailed` without waiting for it (a throw or rejection is warned
   * about once) and emits `api_key.auth_failed`.
   */
  authFailed(prefix: string | null, code: ApiKeyErrorCode, known: KnownKey | undefined): void {
    if (this.#onAuthFailed !== undefined) {
      callDetached(this.#onAuthFailed, [prefix, code], this.#authFailedFailed);
    }
    this.#emitEvent?.({ type: "api_key.auth_failed", at: this.#clock(), prefix, code, ...known });
  }

  /** Emits `api_key.used` for `context`. */
  used(context: ApiKeyContext): void {
    this.#emitEvent?.({
      type: "api_key.used",
      at: this.#clock(),
      keyId: context.keyId,
      tenantId: context.tenantId,
      prefix: context.prefix,
      environment: context.environment,
      scopes: [...context.scopes],
    });
  }
}
