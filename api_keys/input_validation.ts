/**
 * Validation of `create`, `rotate` and `list` inputs. Each failure is an
 * `ApiKeyValidationError` naming the field; nothing is written on failure.
 *
 * @module
 */
import { ApiKeyValidationError } from "./errors.ts";
import { normalizeAllowedIpCidrs } from "./ip_allowlist.ts";
import { flattenScopes } from "./scopes.ts";
import type { CreateApiKeyInput, Environment, RotateApiKeyInput } from "./types.ts";

/**
 * Longest accepted key name.
 *
 * @example
 * ```ts
 * import { MAX_API_KEY_NAME_LENGTH } from "./input_validation.ts";
 * MAX_API_KEY_NAME_LENGTH; // 200
 * ```
 */
export const MAX_API_KEY_NAME_LENGTH = 200;

/**
 * A validated create input: scopes flattened, allowlist canonical.
 *
 * @example
 * ```ts
 * import type { ValidCreateInput } from "./input_validation.ts";
 * declare const input: ValidCreateInput;
 * input.scopes; // string[]
 * ```
 */
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
}

/**
 * A validated rotate input.
 *
 * @example
 * ```ts
 * import type { ValidRotateInput } from "./input_validation.ts";
 * declare const input: ValidRotateInput;
 * input.gracePeriodMs; // number
 * ```
 */
export interface ValidRotateInput {
  /** Grace period in ms. */
  gracePeriodMs: number;
  /** New name, or undefined to inherit. */
  name: string | undefined;
  /** Creator of the new key, or undefined. */
  createdBy: string | undefined;
  /** Requested expiry. */
  expiresAt: Date | null | undefined;
  /** New allowlist, or undefined to inherit. */
  allowedIpCidrs: string[] | undefined;
}

/**
 * Default grace period of `rotate`: 24 hours.
 *
 * @example
 * ```ts
 * import { DEFAULT_GRACE_PERIOD_MS } from "./input_validation.ts";
 * DEFAULT_GRACE_PERIOD_MS; // 86400000
 * ```
 */
export const DEFAULT_GRACE_PERIOD_MS = 24 * 60 * 60 * 1000;

function fail(field: string, problem: string): never {
  throw new ApiKeyValidationError(field, problem);
}

/**
 * Throws unless `value` is a non-empty string (after trimming).
 *
 * @example
 * ```ts
 * import { requireNonEmptyString } from "./input_validation.ts";
 * requireNonEmptyString("t1", "tenantId"); // "t1"
 * ```
 */
export function requireNonEmptyString(value: unknown, field: string): string {
  if (typeof value !== "string" || value.trim() === "") fail(field, "must be a non-empty string");
  return value;
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
    fail("expiresAt", "must be a valid Date or null");
  }
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

/**
 * Validates a create input.
 *
 * @example
 * ```ts
 * import { validateCreateInput } from "./input_validation.ts";
 * validateCreateInput({ tenantId: "t1", name: "ci", scopes: [{ resource: "a", level: "read" }] })
 *   .environment; // "live"
 * ```
 */
export function validateCreateInput(input: CreateApiKeyInput): ValidCreateInput {
  if (typeof input !== "object" || input === null) fail("input", "must be an object");
  const tenantId = requireNonEmptyString(input.tenantId, "tenantId");
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
  };
}

/**
 * Validates a rotate input (all fields optional).
 *
 * @example
 * ```ts
 * import { validateRotateInput } from "./input_validation.ts";
 * validateRotateInput(undefined).gracePeriodMs; // 86400000
 * ```
 */
export function validateRotateInput(input: RotateApiKeyInput | undefined): ValidRotateInput {
  if (input === undefined) input = {};
  if (typeof input !== "object" || input === null) fail("input", "must be an object");
  const grace = input.gracePeriodMs ?? DEFAULT_GRACE_PERIOD_MS;
  if (typeof grace !== "number" || !Number.isFinite(grace) || grace < 0) {
    fail("gracePeriodMs", "must be a non-negative number of milliseconds");
  }
  return {
    gracePeriodMs: grace,
    name: input.name === undefined ? undefined : validName(input.name),
    createdBy: validCreatedBy(input.createdBy),
    expiresAt: validExpiry(input.expiresAt),
    allowedIpCidrs: input.allowedIpCidrs === undefined
      ? undefined
      : validCidrs(input.allowedIpCidrs),
  };
}
