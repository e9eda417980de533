/**
 * Typed errors of the API-key component. Each carries `code` and `httpStatus`
 * as plain properties and the library's error brand, so other entry points
 * (the safe-response exception filter) recognise them without their classes.
 * Over 300 lines because every error class and the one code table live here.
 *
 * @module
 */

import type {
  ApiKeyContext,
  ApiKeyCreditBalance,
  ApiKeyCreditBalanceOwner,
  ApiKeyRateLimitResult,
} from "./types.ts";

/**
 * Brand of this library's errors, on their prototypes. A registered symbol:
 * every copy of the library and the safe-response filter see the same one.
 */
const LIBRARY_ERROR = Symbol.for("saferoute.api-kit.error");

/**
 * Codes of verification and authorization failures, by member name (the
 * value object of `@nestarc/api-keys` 0.1: `ApiKeyErrorCode.Invalid`); the
 * one table of the codes. Frozen.
 */
export const ApiKeyErrorCode = {
  Missing: "api_key_missing",
  Malformed: "api_key_malformed",
  Invalid: "api_key_invalid",
  Revoked: "api_key_revoked",
  Expired: "api_key_expired",
  EnvironmentMismatch: "api_key_environment_mismatch",
  ScopeInsufficient: "api_key_scope_insufficient",
  IpNotAllowed: "api_key_ip_not_allowed",
  RateLimited: "api_key_rate_limited",
  RateLimitUnavailable: "api_key_rate_limit_unavailable",
  UsageExceeded: "api_key_usage_exceeded",
} as const;
Object.freeze(ApiKeyErrorCode);

/** A code of `ApiKeyErrorCode`: the spec's string (`"api_key_invalid"`, ...). */
export type ApiKeyErrorCode = (typeof ApiKeyErrorCode)[keyof typeof ApiKeyErrorCode];

/** HTTP status of each `ApiKeyErrorCode`. */
export const API_KEY_ERROR_STATUS: Readonly<Record<ApiKeyErrorCode, number>> = Object.freeze({
  api_key_missing: 401,
  api_key_malformed: 401,
  api_key_invalid: 401,
  api_key_revoked: 401,
  api_key_expired: 401,
  api_key_environment_mismatch: 403,
  api_key_scope_insufficient: 403,
  api_key_ip_not_allowed: 403,
  api_key_rate_limited: 429,
  api_key_rate_limit_unavailable: 503,
  api_key_usage_exceeded: 429,
});

const API_KEY_ERROR_MESSAGES: Readonly<Record<ApiKeyErrorCode, string>> = Object.freeze({
  api_key_missing: "API key is missing",
  api_key_malformed: "API key is malformed",
  api_key_invalid: "API key is invalid",
  api_key_revoked: "API key has been revoked",
  api_key_expired: "API key has expired",
  api_key_environment_mismatch: "API key environment is not allowed for this route",
  api_key_scope_insufficient: "API key lacks the required scope",
  api_key_ip_not_allowed: "API key is not allowed from this address",
  api_key_rate_limited: "API key rate limit exceeded",
  api_key_rate_limit_unavailable: "API key rate limits are unavailable",
  api_key_usage_exceeded: "API key has too few credits left",
});

/**
 * A verification or authorization failure. Its message is fixed per code and
 * never contains the key.
 *
 * @example
 * ```ts
 * import { ApiKeyError } from "./errors.ts";
 * const error = new ApiKeyError("api_key_expired");
 * error.httpStatus; // 401
 * ```
 */
export class ApiKeyError extends Error {
  /** Failure code. */
  readonly code: ApiKeyErrorCode;
  /** HTTP status: 401, 403, 429 or 503. */
  readonly httpStatus: number;
  /** Optional safe detail for logs (never key material). */
  readonly reason?: string;
  /** `api_key_rate_limited`: each policy's answer (the denying ones have `allowed: false`). */
  declare readonly rateLimitResults?: readonly ApiKeyRateLimitResult[];
  /**
   * `api_key_usage_exceeded`: the refusing balance's answer (`resetMs` to the next refill, -1 for
   * none); `api_key_rate_limited` with credits: the refusing balance's when one refused too, else
   * the first balance's (nothing spent).
   */
  declare readonly creditResult?: ApiKeyContext["creditResult"];
  /**
   * `api_key_usage_exceeded` (and `api_key_rate_limited` when a balance refused too): whose
   * balance refused, the key's own or the tenant's shared pool.
   */
  declare readonly creditBalance?: ApiKeyContext["creditBalance"];
  /**
   * `api_key_usage_exceeded` (and `api_key_rate_limited` when a balance refused too): the
   * refusing balance as the HTTP answers name it (their `details`: the Nest guard, the Fetch
   * authorizer, safe-response).
   */
  declare readonly details?: { readonly creditBalance: ApiKeyCreditBalanceOwner };

  /** Creates the error for `code`, with an optional safe `reason`. */
  constructor(code: ApiKeyErrorCode, reason?: string) {
    super(API_KEY_ERROR_MESSAGES[code]);
    this.name = "ApiKeyError";
    this.code = code;
    this.httpStatus = API_KEY_ERROR_STATUS[code];
    if (reason !== undefined) this.reason = reason;
  }
}

/**
 * Builds an `ApiKeyError` the way the library does for every verification,
 * authorization and header failure: the same fields as `new ApiKeyError(code,
 * reason)` (message from the same table), without capturing a stack trace
 * (about 1.5 µs saved per failure; the stack of an authentication failure
 * says nothing). Internal: not exported by the entry point.
 */
export function apiKeyError(code: ApiKeyErrorCode, reason?: string): ApiKeyError {
  const error = Object.create(ApiKeyError.prototype) as ApiKeyError;
  const message = API_KEY_ERROR_MESSAGES[code];
  Object.defineProperties(error, {
    stack: { value: `ApiKeyError: ${message}`, writable: true, configurable: true },
    message: { value: message, writable: true, configurable: true },
  });
  return Object.assign(error, {
    code,
    httpStatus: API_KEY_ERROR_STATUS[code],
    reason,
    name: "ApiKeyError",
  });
}

/**
 * The `WWW-Authenticate` field a 401 for `code` carries (RFC 9110 §15.5.2),
 * `undefined` for any other code: the `Bearer` scheme (RFC 6750), since a key
 * may travel as `Authorization: Bearer`, and `error="invalid_token"` once a
 * key was sent, whatever its state (the challenge says no more than the
 * status). Internal: the Nest guard and the Fetch authorizer set it.
 */
export function apiKeyChallenge(code: string): string | undefined {
  if (code === "api_key_missing") return "Bearer";
  return API_KEY_ERROR_STATUS[code as ApiKeyErrorCode] === 401
    ? 'Bearer error="invalid_token"'
    : undefined;
}

/** Codes of management-operation failures. */
export type ApiKeyOperationErrorCode = "api_key_record_not_found" | "api_key_not_rotatable";

const OPERATION_STATUS: Readonly<Record<ApiKeyOperationErrorCode, number>> = Object.freeze({
  api_key_record_not_found: 404,
  api_key_not_rotatable: 409,
});

const OPERATION_MESSAGES: Readonly<Record<ApiKeyOperationErrorCode, string>> = Object.freeze({
  api_key_record_not_found: "API key record not found",
  api_key_not_rotatable: "API key cannot be rotated",
});

/**
 * A management-operation failure (`rotate`, `revoke`): 404 or 409.
 *
 * @example
 * ```ts
 * import { ApiKeyOperationError } from "./errors.ts";
 * const error = new ApiKeyOperationError("api_key_record_not_found");
 * error.httpStatus; // 404
 * ```
 */
export class ApiKeyOperationError extends Error {
  /** Failure code. */
  readonly code: ApiKeyOperationErrorCode;
  /** HTTP status: 404 or 409. */
  readonly httpStatus: number;
  /** Optional safe detail. */
  readonly reason?: string;

  /** Creates the error for `code`, with an optional safe `reason`. */
  constructor(code: ApiKeyOperationErrorCode, reason?: string) {
    super(OPERATION_MESSAGES[code]);
    this.name = "ApiKeyOperationError";
    this.code = code;
    this.httpStatus = OPERATION_STATUS[code];
    if (reason !== undefined) this.reason = reason;
  }
}

/**
 * The base of the errors whose `cause` must never reach a log line or a JSON
 * body: kept non-enumerable and read-only, and left out of `toJSON`. Not
 * exported (`@internal`: `deno doc --lint` does not ask for it); here, not
 * in a file of its own, so no entry point loads a file more.
 *
 * @internal
 */
abstract class HiddenCauseError extends Error {
  /** Failure code. */
  abstract readonly code: string;
  /** HTTP status. */
  abstract readonly httpStatus: number;

  /** Creates the error; `cause` is stored non-enumerable and never serialised. */
  constructor(message: string, cause: unknown) {
    super(message);
    Object.defineProperty(this, "cause", { value: cause, enumerable: false, writable: false });
  }

  /** JSON form without the cause. */
  toJSON(): { name: string; code: string; httpStatus: number; message: string } {
    const { name, code, httpStatus, message } = this;
    return { name, code, httpStatus, message };
  }
}

/**
 * Storage failed (threw, rejected, timed out or returned a malformed record).
 * Status 503; the cause is kept off the message and out of JSON.
 *
 * @example
 * ```ts
 * import { ApiKeyStorageError } from "./errors.ts";
 * const error = new ApiKeyStorageError("findByPrefix");
 * error.message; // "API key storage is unavailable"
 * ```
 */
export class ApiKeyStorageError extends HiddenCauseError {
  /** Always `api_key_storage_unavailable`. */
  readonly code = "api_key_storage_unavailable" as const;
  /** Always 503. */
  readonly httpStatus = 503;
  /** Storage operation that failed. */
  readonly operation: string;

  /** Creates the error; `cause` is stored non-enumerable and never serialised. */
  constructor(operation: string, cause?: unknown) {
    super("API key storage is unavailable", cause);
    this.name = "ApiKeyStorageError";
    this.operation = operation;
  }
}

/**
 * Codes of input-validation failures: `api_key_invalid_time` for a bad date
 * or duration (seed 0.4), `api_key_invalid_input` for the rest.
 */
export type ApiKeyValidationErrorCode = "api_key_invalid_input" | "api_key_invalid_time";

/**
 * Invalid input to `create` or `rotate` (status 400). `field` names the input.
 *
 * @example
 * ```ts
 * import { ApiKeyValidationError } from "./errors.ts";
 * const error = new ApiKeyValidationError("name", "must be a non-empty string");
 * error.message; // "Invalid name: must be a non-empty string"
 * ```
 */
export class ApiKeyValidationError extends Error {
  /** `api_key_invalid_time` for a bad date or duration, else `api_key_invalid_input`. */
  readonly code: ApiKeyValidationErrorCode;
  /** Always 400. */
  readonly httpStatus = 400;
  /** Name of the offending field. */
  readonly field: string;

  /** Creates the error for `field` with a `problem` description. */
  constructor(
    field: string,
    problem: string,
    code: ApiKeyValidationErrorCode = "api_key_invalid_input",
  ) {
    super(`Invalid ${field}: ${problem}`);
    this.name = "ApiKeyValidationError";
    this.field = field;
    this.code = code;
  }
}

/**
 * `create` or `rotate` drew a prefix already taken on each of its attempts
 * (status 500). `cause` is the storage error of the last attempt.
 *
 * @example
 * ```ts
 * import { ApiKeyPrefixCollisionError } from "./errors.ts";
 * const error = new ApiKeyPrefixCollisionError("create", 3, new Error("duplicate prefix"));
 * error.code; // "api_key_prefix_collision"
 * ```
 */
export class ApiKeyPrefixCollisionError extends Error {
  /** Always `api_key_prefix_collision`. */
  readonly code = "api_key_prefix_collision" as const;
  /** Always 500. */
  readonly httpStatus = 500;
  /** The operation that gave up. */
  readonly operation: "create" | "rotate";
  /** Attempts made, each with a new key. */
  readonly attempts: number;

  /** Creates the error; `cause` is kept as the standard non-enumerable `cause`. */
  constructor(operation: "create" | "rotate", attempts: number, cause: unknown) {
    super(`API key ${operation} found no free prefix in ${attempts} attempts`, { cause });
    this.name = "ApiKeyPrefixCollisionError";
    this.operation = operation;
    this.attempts = attempts;
  }
}

/**
 * `updateCredits` applied its change but the audit record of it was not
 * written (status 500): the credit store is not the audit storage, so the
 * two share no transaction. Do not retry the change: it happened, with the
 * resulting `balance`; record it by other means. `cause` is the append's
 * failure, kept off the message and out of JSON.
 *
 * @example
 * ```ts
 * import { ApiKeyAuditNotRecordedError } from "./errors.ts";
 * const error = new ApiKeyAuditNotRecordedError({ remaining: 15, nextRefillAt: null });
 * error.balance.remaining; // 15
 * ```
 */
export class ApiKeyAuditNotRecordedError extends HiddenCauseError {
  /** Always `api_key_audit_not_recorded`. */
  readonly code = "api_key_audit_not_recorded" as const;
  /** Always 500. */
  readonly httpStatus = 500;
  /** The balance the change left (as `updateCredits` resolves it). */
  readonly balance: ApiKeyCreditBalance;

  /** Creates the error; `cause` is stored non-enumerable and never serialised. */
  constructor(balance: ApiKeyCreditBalance, cause?: unknown) {
    super("The credit change was applied but its audit record was not written", cause);
    this.name = "ApiKeyAuditNotRecordedError";
    this.balance = balance;
  }

  /** JSON form without the cause. */
  override toJSON(): {
    name: string;
    code: string;
    httpStatus: number;
    message: string;
    balance: ApiKeyCreditBalance;
  } {
    return { ...super.toJSON(), balance: this.balance };
  }
}

for (
  const type of [
    ApiKeyError,
    ApiKeyOperationError,
    ApiKeyStorageError,
    ApiKeyValidationError,
    ApiKeyPrefixCollisionError,
    ApiKeyAuditNotRecordedError,
  ]
) {
  Object.defineProperty(type.prototype, LIBRARY_ERROR, { value: true });
}
