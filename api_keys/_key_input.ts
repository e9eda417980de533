/**
 * Validation of `create`, `rotate` and `list` inputs. Each failure is an
 * `ApiKeyValidationError` naming the field (an unknown one on `input`);
 * nothing is written on failure.
 *
 * @module
 */
import {
  actorProblem,
  fail,
  failTime,
  instantProblem,
  requireDuration,
  requireNonEmptyString,
  requireObjectOf,
  validTenantId,
} from "./_input.ts";
import { requireKeyName } from "./_key_name.ts";
import { serviceAllowedIpCidrs } from "./ip_allowlist.ts";
import type { KeyLayouts } from "./key_format.ts";
import { flattenScopes } from "./scopes.ts";
import { keyRateLimits } from "./metering/_limits.ts";
import {
  type ApiKeyGraceStart,
  type CreateApiKeyInput,
  DEFAULT_GRACE_PERIOD_MS,
  type Environment,
  type ListApiKeysOptions,
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

/** The fields of a create input: any other is refused (`allowedIps` for `allowedIpCidrs`). */
const CREATE_FIELDS: readonly string[] = Object.keys(
  {
    tenantId: true,
    name: true,
    scopes: true,
    environment: true,
    expiresAt: true,
    createdBy: true,
    allowedIpCidrs: true,
    rateLimits: true,
    credits: true,
    limitsOf: true,
  } satisfies Record<keyof CreateApiKeyInput, true>,
);

/** The fields of a rotate input: any other is refused (`gracePeriod` for `gracePeriodMs`). */
const ROTATE_FIELDS: readonly string[] = Object.keys(
  {
    gracePeriodMs: true,
    graceStarts: true,
    maxWaitMs: true,
    name: true,
    createdBy: true,
    expiresAt: true,
    allowedIpCidrs: true,
    rateLimits: true,
    credits: true,
  } satisfies Record<keyof RotateApiKeyInput, true>,
);

function validExpiry(value: unknown): Date | null | undefined {
  if (value === undefined || value === null) return value;
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) {
    failTime("expiresAt", "must be a valid Date or null");
  }
  const problem = instantProblem(value.getTime());
  if (problem !== undefined) failTime("expiresAt", problem);
  return value;
}

/** `createdBy`: an actor's name (`actorProblem`: at most `MAX_ACTOR_LENGTH`, printable), or undefined. */
function validCreatedBy(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  const problem = actorProblem(value);
  return problem === undefined ? value as string : fail("createdBy", problem);
}

/** The allowlist, canonical; a bad entry's echo has the keys of `layouts` (the service's) redacted too. */
function validCidrs(value: unknown, layouts: KeyLayouts | undefined): string[] {
  try {
    return serviceAllowedIpCidrs(value as string[] | undefined, layouts);
  } catch (error) {
    return fail("allowedIpCidrs", (error as Error).message);
  }
}

/** Validates a create input (`layouts`: the service's, see `validCidrs`). */
export function validateCreateInput(
  input: CreateApiKeyInput,
  layouts?: KeyLayouts,
): ValidCreateInput {
  requireObjectOf(input, CREATE_FIELDS, "input");
  const tenantId = validTenantId(input.tenantId);
  const name = requireKeyName(input.name, "name");
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
    allowedIpCidrs: validCidrs(input.allowedIpCidrs, layouts),
    rateLimits: input.rateLimits === undefined ? undefined : keyRateLimits(input.rateLimits),
    limitsOf: input.limitsOf === undefined
      ? undefined
      : requireNonEmptyString(input.limitsOf, "limitsOf"),
  };
}

/** Validates a rotate input (all fields optional) of a rotation at `now` (`layouts`: see `validCidrs`). */
export function validateRotateInput(
  input: RotateApiKeyInput | undefined,
  now: Date,
  layouts?: KeyLayouts,
): ValidRotateInput {
  if (input === undefined) input = {};
  requireObjectOf(input, ROTATE_FIELDS, "input");
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
    name: input.name === undefined ? undefined : requireKeyName(input.name, "name"),
    createdBy: validCreatedBy(input.createdBy),
    expiresAt: validExpiry(input.expiresAt),
    allowedIpCidrs: input.allowedIpCidrs === undefined
      ? undefined
      : validCidrs(input.allowedIpCidrs, layouts),
    rateLimits: input.rateLimits === undefined ? undefined : keyRateLimits(input.rateLimits),
  };
}

/** Validates the options of `list`; answers `includeRevoked` (default false). */
export function validateListOptions(options: ListApiKeysOptions | undefined): boolean {
  const includeRevoked = options?.includeRevoked ?? false;
  if (typeof includeRevoked !== "boolean") fail("includeRevoked", "must be a boolean");
  return includeRevoked;
}
