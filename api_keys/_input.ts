/**
 * Validation of `create`, `rotate` and `list` inputs. Each failure is an
 * `ApiKeyValidationError` naming the field; nothing is written on failure.
 *
 * @module
 */
import { ApiKeyValidationError } from "./errors.ts";
import { normalizeAllowedIpCidrs } from "./ip_allowlist.ts";
import { flattenScopes } from "./scopes.ts";
import { keyRateLimits } from "./_limits.ts";
import {
  type ApiKeyGraceStart,
  type CreateApiKeyInput,
  DEFAULT_GRACE_PERIOD_MS,
  type Environment,
  type ListApiKeysOptions,
  MAX_API_KEY_NAME_LENGTH,
  type RotateApiKeyInput,
} from "./types.ts";

/** A validated create input: scopes flattened, allowlist canonical. */
export interface ValidCreateInput {
  /** Tenant. */
  tenantId: string;
  /** Name. */
  name: string;
  /** Flattened scopes. */
  scopes: string[];
  /** Environment. */
  environment: Environment;
  /** Requested expiry (not yet resolved against the TTL policy). */
  expiresAt: Date | null | undefined;
  /** Creator or null. */
  createdBy: string | null;
  /** Canonical allowlist. */
  allowedIpCidrs: string[];
  /** Compiled rate-limit policies, or undefined for none. */
  rateLimits: ReturnType<typeof keyRateLimits> | undefined;
  /** Id of the key whose windows and balance the new key shares, or undefined. */
  limitsOf: string | undefined;
}

/** A validated rotate input. */
export interface ValidRotateInput {
  /** Grace period in ms. */
  gracePeriodMs: number;
  /** When the grace period starts. */
  graceStarts: ApiKeyGraceStart;
  /** How long to wait for the new key's first use, in ms (0 when the grace starts at rotation). */
  maxWaitMs: number;
  /** New name, or undefined to inherit. */
  name: string | undefined;
  /** Creator of the new key, or undefined. */
  createdBy: string | undefined;
  /** Requested expiry. */
  expiresAt: Date | null | undefined;
  /** New allowlist, or undefined to inherit. */
  allowedIpCidrs: string[] | undefined;
  /** Compiled rate-limit policies, or undefined to inherit. */
  rateLimits: ReturnType<typeof keyRateLimits> | undefined;
}

/**
 * The latest instant a duration or an expiry may produce (epoch ms of
 * 9999-12-31T23:59:59.999Z): every date the service stores or computes is at
 * most this, so it is valid and fits a database timestamp.
 */
export const MAX_API_KEY_INSTANT_MS: number = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * What is wrong with the instant `ms` (a number), or `undefined` when it is at
 * most `MAX_API_KEY_INSTANT_MS`. Callers wrap the problem in their own error.
 */
export function instantProblem(ms: number): string | undefined {
  return ms <= MAX_API_KEY_INSTANT_MS ? undefined : "must not reach past 9999-12-31T23:59:59.999Z";
}

/**
 * What is wrong with `value` as a duration in ms starting at `fromMs`, or
 * `undefined`: it must be a finite number, at least 0, whose end
 * (`fromMs + value`) passes `instantProblem`. The one rule for every duration
 * of the component (`gracePeriodMs`, the TTL policy, `debounceMs`,
 * `storageTimeoutMs`).
 */
export function durationProblem(value: unknown, fromMs: number): string | undefined {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    return "must be a non-negative number of milliseconds";
  }
  return instantProblem(fromMs + value);
}

/** Throws the `ApiKeyValidationError` of `field` (the one way they are built). */
export function fail(field: string, problem: string): never {
  throw new ApiKeyValidationError(field, problem);
}

/** Throws the `ApiKeyValidationError` of a bad date or duration `field` (`api_key_invalid_time`). */
export function failTime(field: string, problem: string): never {
  throw new ApiKeyValidationError(field, problem, "api_key_invalid_time");
}

/**
 * Returns `value` when it is a duration from `fromMs` (see `durationProblem`);
 * otherwise throws `ApiKeyValidationError` (`api_key_invalid_time`) naming `field`.
 */
export function requireDuration(value: unknown, field: string, fromMs: number): number {
  const problem = durationProblem(value, fromMs);
  if (problem !== undefined) failTime(field, problem);
  return value as number;
}

/** Throws unless `value` is a non-empty string (after trimming). */
export function requireNonEmptyString(value: unknown, field: string): string {
  if (typeof value !== "string" || value.trim() === "") fail(field, "must be a non-empty string");
  return value;
}

/** Longest tenant id of a new key, in UTF-16 units (seed 0.4). */
const MAX_TENANT_ID_LENGTH = 255;

/**
 * A new key's tenant id: 1 to 255 UTF-16 units without surrounding
 * whitespace. Ids already stored are not checked again (they keep verifying).
 */
function validTenantId(value: unknown): string {
  const tenantId = requireNonEmptyString(value, "tenantId");
  if (tenantId.trim() !== tenantId) fail("tenantId", "must not start or end with whitespace");
  if (tenantId.length > MAX_TENANT_ID_LENGTH) {
    fail("tenantId", `must be at most ${MAX_TENANT_ID_LENGTH} UTF-16 code units`);
  }
  return tenantId;
}

function validName(value: unknown): string {
  const name = requireNonEmptyString(value, "name");
  if (name.length > MAX_API_KEY_NAME_LENGTH) {
    fail("name", `must be at most ${MAX_API_KEY_NAME_LENGTH} characters`);
  }
  return name;
}

function validExpiry(value: unknown): Date | null | undefined {
  if (value === undefined || value === null) return value;
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) {
    failTime("expiresAt", "must be a valid Date or null");
  }
  const problem = instantProblem(value.getTime());
  if (problem !== undefined) failTime("expiresAt", problem);
  return value;
}

function validCreatedBy(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  return requireNonEmptyString(value, "createdBy");
}

function validCidrs(value: unknown): string[] {
  try {
    return normalizeAllowedIpCidrs(value as string[] | undefined);
  } catch (error) {
    return fail("allowedIpCidrs", (error as Error).message);
  }
}

/** Validates a create input. */
export function validateCreateInput(input: CreateApiKeyInput): ValidCreateInput {
  if (typeof input !== "object" || input === null) fail("input", "must be an object");
  const tenantId = validTenantId(input.tenantId);
  const name = validName(input.name);
  if (!Array.isArray(input.scopes) || input.scopes.length === 0) {
    fail("scopes", "must contain at least one scope");
  }
  let scopes: string[];
  try {
    scopes = flattenScopes(input.scopes);
  } catch (error) {
    return fail("scopes", (error as Error).message);
  }
  const environment = input.environment ?? "live";
  if (environment !== "live" && environment !== "test") {
    fail("environment", 'must be "live" or "test"');
  }
  return {
    tenantId,
    name,
    scopes,
    environment,
    expiresAt: validExpiry(input.expiresAt),
    createdBy: validCreatedBy(input.createdBy) ?? null,
    allowedIpCidrs: validCidrs(input.allowedIpCidrs),
    rateLimits: input.rateLimits === undefined ? undefined : keyRateLimits(input.rateLimits),
    limitsOf: input.limitsOf === undefined
      ? undefined
      : requireNonEmptyString(input.limitsOf, "limitsOf"),
  };
}

/** Validates a rotate input (all fields optional) of a rotation at `now`. */
export function validateRotateInput(
  input: RotateApiKeyInput | undefined,
  now: Date,
): ValidRotateInput {
  if (input === undefined) input = {};
  if (typeof input !== "object" || input === null) fail("input", "must be an object");
  const gracePeriodMs = requireDuration(
    input.gracePeriodMs ?? DEFAULT_GRACE_PERIOD_MS,
    "gracePeriodMs",
    now.getTime(),
  );
  const graceStarts = input.graceStarts ?? "rotation";
  if (graceStarts !== "rotation" && graceStarts !== "first-use") {
    fail("graceStarts", 'must be "rotation" or "first-use"');
  }
  if (graceStarts === "first-use" && input.maxWaitMs === undefined) {
    fail("maxWaitMs", 'is required with graceStarts "first-use"');
  }
  if (graceStarts === "rotation" && input.maxWaitMs !== undefined) {
    fail("maxWaitMs", 'applies only with graceStarts "first-use"');
  }
  return {
    gracePeriodMs,
    graceStarts,
    // The upper bound of the grace end, now + maxWaitMs + gracePeriodMs, is a valid instant too.
    maxWaitMs: requireDuration(input.maxWaitMs ?? 0, "maxWaitMs", now.getTime() + gracePeriodMs),
    name: input.name === undefined ? undefined : validName(input.name),
    createdBy: validCreatedBy(input.createdBy),
    expiresAt: validExpiry(input.expiresAt),
    allowedIpCidrs: input.allowedIpCidrs === undefined
      ? undefined
      : validCidrs(input.allowedIpCidrs),
    rateLimits: input.rateLimits === undefined ? undefined : keyRateLimits(input.rateLimits),
  };
}

/** Validates the options of `list`; answers `includeRevoked` (default false). */
export function validateListOptions(options: ListApiKeysOptions | undefined): boolean {
  const includeRevoked = options?.includeRevoked ?? false;
  if (typeof includeRevoked !== "boolean") fail("includeRevoked", "must be a boolean");
  return includeRevoked;
}

/** Most thresholds one run accepts. */
const MAX_THRESHOLDS = 32;

/** Longest threshold: about 100 years, far below the latest instant the service stores. */
const MAX_THRESHOLD_MS = 100 * 365 * 86_400_000;

/**
 * What is wrong with `value` as the thresholds of `notifyExpiring`, or
 * `undefined`: a non-empty array (at most 32) of positive whole numbers of
 * milliseconds, each at most about 100 years. The one rule, for the service
 * and the Nest module's `expiryNotices` option (here, not in _expiry.ts: the
 * module checks it at start without loading the job).
 */
export function thresholdsProblem(value: unknown): string | undefined {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_THRESHOLDS) {
    return `must be a non-empty array of at most ${MAX_THRESHOLDS} durations`;
  }
  for (const threshold of value) {
    if (!Number.isSafeInteger(threshold) || threshold <= 0 || threshold > MAX_THRESHOLD_MS) {
      return `must be positive whole numbers of milliseconds, at most ${MAX_THRESHOLD_MS}`;
    }
  }
  return undefined;
}
