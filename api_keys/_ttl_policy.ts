/**
 * The expiry policy of create and rotate, compiled once from `ApiKeyTtlPolicy`.
 *
 * Rules: `expiresAt` omitted → on rotate, the old key's expiry when it has
 * one (a rotation never silently extends a key's lifetime), at most
 * `now + maxExpiresInMs` (a key made before the policy was tightened); otherwise
 * `now + defaultExpiresInMs` when set, else, on rotate of a key without expiry
 * under a policy refusing none, `now + maxExpiresInMs`, else no expiry;
 * `null` → no expiry; no expiry only when `allowNeverExpires` (default true when the policy sets
 * neither `defaultExpiresInMs` nor `maxExpiresInMs`, false otherwise); an
 * expiry requested not after `now` or past `now + maxExpiresInMs` is
 * rejected, never clamped.
 *
 * @module
 */
import { fail, failTime, requireDuration } from "./_input.ts";
import type { ApiKeyTtlPolicy } from "./types.ts";

/**
 * Resolves the expiry of a new key from the requested `expiresAt` (omitted,
 * `null` or a date already validated by `validateCreateInput` or
 * `validateRotateInput`) at `now`. On rotate, `replaced` is the old key's
 * expiry: an omitted `expiresAt` keeps it when it is a date, at most `now + maxExpiresInMs`
 * (a key without expiry: that bound, when the policy refuses none and has no default). Throws
 * `ApiKeyValidationError` on field
 * `expiresAt` (or `ttlPolicy.defaultExpiresInMs` when the default would end
 * after `MAX_API_KEY_INSTANT_MS`).
 */
export type ExpiryResolver = (
  requested: Date | null | undefined,
  now: Date,
  replaced?: Date | null,
) => Date | null;

/** Whether `policy` (assumed validated) allows a key without expiry. */
function allowsNeverExpires(policy: ApiKeyTtlPolicy = {}): boolean {
  return policy.allowNeverExpires ??
    (policy.defaultExpiresInMs === undefined && policy.maxExpiresInMs === undefined);
}

/**
 * Whether `policy` (assumed validated) allows a key living `lifetimeMs` from
 * its creation (`null`: no expiry).
 */
export function allowsLifetime(policy: ApiKeyTtlPolicy, lifetimeMs: number | null): boolean {
  return lifetimeMs === null
    ? allowsNeverExpires(policy)
    : policy.maxExpiresInMs === undefined || lifetimeMs <= policy.maxExpiresInMs;
}

/** Compiles a policy (assumed validated) into an `ExpiryResolver`. */
export function compileTtlPolicy(policy: ApiKeyTtlPolicy = {}): ExpiryResolver {
  const { defaultExpiresInMs, maxExpiresInMs } = policy;
  const allowNeverExpires = allowsNeverExpires(policy);
  return (requested, now, replaced) => {
    let expiresAt: Date | null;
    if (requested === undefined && replaced instanceof Date) {
      expiresAt = maxExpiresInMs !== undefined &&
          replaced.getTime() > now.getTime() + maxExpiresInMs
        ? new Date(now.getTime() + maxExpiresInMs)
        : replaced;
    } else if (requested === undefined && defaultExpiresInMs !== undefined) {
      expiresAt = new Date(
        now.getTime() +
          requireDuration(defaultExpiresInMs, "ttlPolicy.defaultExpiresInMs", now.getTime()),
      );
    } else if (
      requested === undefined && replaced === null && !allowNeverExpires &&
      maxExpiresInMs !== undefined
    ) {
      // A key without expiry (made before the policy): its successor's expiry as a dated key's.
      expiresAt = new Date(
        now.getTime() + requireDuration(maxExpiresInMs, "ttlPolicy.maxExpiresInMs", now.getTime()),
      );
    } else if (requested === undefined || requested === null) {
      expiresAt = null;
    } else {
      expiresAt = requested;
      if (expiresAt.getTime() <= now.getTime()) {
        failTime("expiresAt", "must be in the future");
      }
      if (maxExpiresInMs !== undefined && expiresAt.getTime() > now.getTime() + maxExpiresInMs) {
        failTime(
          "expiresAt",
          `must be at most ${maxExpiresInMs} ms from now (ttlPolicy.maxExpiresInMs)`,
        );
      }
    }
    if (expiresAt === null && !allowNeverExpires) {
      fail("expiresAt", "keys without expiry are not allowed by the TTL policy");
    }
    return expiresAt === null ? null : new Date(expiresAt.getTime());
  };
}
