/**
 * The "no escalation" rule, the admin routes' default policy: a caller may
 * create, rotate, rename or revoke only keys no more powerful than its own
 * key. One pure function, no I/O. A key is no more powerful than the admin key
 * when it has
 *
 * - the same environment, or `test` when the admin key is `live`;
 * - only scopes the admin key holds (`write` covers `read`);
 * - an allowlist at least as narrow: every range inside a range of the admin
 *   key's allowlist (no allowlist means any address, `0.0.0.0/0` and `::/0`);
 * - an expiry no later than the admin key's (no expiry means never).
 *
 * And, with `findLimitsEscalation` (create and rotate for a caller with a
 * key), a key is never less limited than the caller's key: its policies, on
 * the same window counters, and the same balances.
 *
 * @module
 */
import { isIpAllowed } from "../ip_allowlist.ts";
import { scopeSatisfies } from "../scopes.ts";
import type { KeyLimits } from "../_manage.ts";
import type { ApiKeyRateLimitPolicy, ApiKeyRecord, Scope } from "../types.ts";

/**
 * What makes a key powerful: the fields of a record the rule compares.
 * Allowlists are canonical, as stored (`normalizeAllowedIpCidrs` gives that
 * form); an entry in any other form counts as exceeding.
 *
 * @example
 * ```ts
 * import type { KeyPowers } from "@saferoute/api-kit/api-keys/admin";
 * const powers: KeyPowers = {
 *   environment: "test", scopes: ["projects:read"], allowedIpCidrs: [], expiresAt: null,
 * };
 * ```
 */
export type KeyPowers = Pick<
  ApiKeyRecord,
  "environment" | "scopes" | "allowedIpCidrs" | "expiresAt"
>;

/**
 * Where a key exceeds the admin key: per field, the values that exceed
 * (`expiresAt` is `"never"` for a key without expiry). Fields within the
 * admin key's powers are absent.
 *
 * @example
 * ```ts
 * import type { Escalation } from "@saferoute/api-kit/api-keys/admin";
 * const escalation: Escalation = { scopes: ["billing:read"], expiresAt: ["never"] };
 * ```
 */
export interface Escalation {
  /** The key's environment, when the admin key may not issue it. */
  environment?: string[];
  /** Scopes the admin key does not hold. */
  scopes?: string[];
  /** Ranges outside every range of the admin key's allowlist. */
  allowedIpCidrs?: string[];
  /** The key's expiry, when later than the admin key's. */
  expiresAt?: string[];
  /** Names of the caller's rate-limit policies the key would not keep as they are, on the caller's counters. */
  rateLimits?: string[];
  /**
   * `"separate balance"`: another balance where it must spend the caller's;
   * `"no balance"`: none where it must spend the caller's.
   */
  credits?: string[];
}

/** The fields of an `Escalation` (each a list of strings), complete by type. */
export const ESCALATION_FIELDS: ReadonlySet<string> = new Set(
  Object.keys(
    {
      environment: true,
      scopes: true,
      allowedIpCidrs: true,
      expiresAt: true,
      rateLimits: true,
      credits: true,
    } satisfies Record<keyof Escalation, true>,
  ),
);

/** What an empty allowlist allows: every IPv4 and every IPv6 address. */
const ANY_ADDRESS: readonly string[] = Object.freeze(["0.0.0.0/0", "::/0"]);

function rangesOf(key: KeyPowers): readonly string[] {
  const ranges = key.allowedIpCidrs ?? [];
  return ranges.length === 0 ? ANY_ADDRESS : ranges;
}

/**
 * Whether canonical range `inner` lies inside canonical range `outer`: its
 * prefix is at least as long and its network address is in `outer` (ranges
 * are aligned blocks, so then all of it is). Different families never nest.
 */
function rangeWithin(inner: string, outer: string): boolean {
  const [network, bits] = inner.split("/");
  return Number(bits) >= Number(outer.split("/")[1]) && isIpAllowed(network, [outer]);
}

/** `resource:level` back to a scope (the resource never contains `:`). */
function parseFlatScope(flat: string): Scope {
  const at = flat.lastIndexOf(":");
  return { resource: flat.slice(0, at), level: flat.slice(at + 1) as Scope["level"] };
}

function environmentWithin(key: KeyPowers, admin: KeyPowers): boolean {
  return key.environment === admin.environment ||
    (key.environment === "test" && admin.environment === "live");
}

/** Written so that an invalid date on either side counts as exceeding. */
function expiryWithin(key: KeyPowers, admin: KeyPowers): boolean {
  if (admin.expiresAt === null) return true;
  return key.expiresAt !== null && key.expiresAt.getTime() <= admin.expiresAt.getTime();
}

function describeExpiry(expiresAt: Date | null): string {
  if (expiresAt === null) return "never";
  return Number.isNaN(expiresAt.getTime()) ? "invalid" : expiresAt.toISOString();
}

/**
 * Where `key` is more powerful than `admin`, or `null` when it is not, so
 * that `admin` may issue, rotate or revoke it.
 *
 * @example
 * ```ts
 * import { findEscalation } from "@saferoute/api-kit/api-keys/admin";
 * const admin = {
 *   environment: "live" as const,
 *   scopes: ["keys:write", "projects:write"],
 *   allowedIpCidrs: ["10.0.0.0/8"],
 *   expiresAt: new Date("2030-01-01T00:00:00Z"),
 * };
 * findEscalation(admin, { ...admin, environment: "test", scopes: ["projects:read"] }); // null
 * findEscalation(admin, { ...admin, allowedIpCidrs: [], expiresAt: null });
 * // { allowedIpCidrs: ["0.0.0.0/0", "::/0"], expiresAt: ["never"] }
 * ```
 */
export function findEscalation(admin: KeyPowers, key: KeyPowers): Escalation | null {
  const escalation: Escalation = {};
  if (!environmentWithin(key, admin)) escalation.environment = [key.environment];
  const scopes = key.scopes.filter((flat) => {
    const { resource, level } = parseFlatScope(flat);
    return !scopeSatisfies(admin.scopes, resource, level);
  });
  if (scopes.length > 0) escalation.scopes = scopes;
  const adminRanges = rangesOf(admin);
  const ranges = rangesOf(key).filter((range) =>
    !adminRanges.some((outer) => rangeWithin(range, outer))
  );
  if (ranges.length > 0) escalation.allowedIpCidrs = [...ranges];
  if (!expiryWithin(key, admin)) escalation.expiresAt = [describeExpiry(key.expiresAt)];
  return Object.keys(escalation).length === 0 ? null : escalation;
}

/** Whether `policy` is `own` as it is (a looser or stricter one of the same name is not). */
function samePolicy(own: ApiKeyRateLimitPolicy, policy: ApiKeyRateLimitPolicy): boolean {
  return own.limit === policy.limit && own.windowMs === policy.windowMs &&
    (own.cost ?? 1) === (policy.cost ?? 1) && own.sharedBy === policy.sharedBy;
}

/**
 * Where a key with limits `key` would be less limited than the caller's key
 * (limits `caller`), or `null`: a way out of the caller's limits, for a key
 * the caller creates or rotates (its successor keeps its limits). Each of the
 * caller's policies must be the key's as it is and, unless `sharedBy:
 * "tenant"` (the tenant's counter whichever key), on the caller's window
 * counters (`rateLimits`: the names that are not). Each balance the caller
 * spends, its own and the tenant's pool, the key must spend too (`credits`:
 * `"no balance"` for a key spending none, else `"separate balance"`); one
 * more (a pool key with a balance of its own besides) only limits it more.
 *
 * @example
 * ```ts
 * import { findLimitsEscalation } from "./no_escalation.ts";
 * const caller = {
 *   rateLimits: [{ name: "minute", limit: 3, windowMs: 60_000 }],
 *   windowsOf: "k1",
 *   balanceOf: "k1",
 *   pool: false,
 * };
 * findLimitsEscalation(caller, caller); // null
 * findLimitsEscalation(caller, { rateLimits: [], windowsOf: "k2", balanceOf: null, pool: false });
 * // { rateLimits: ["minute"], credits: ["no balance"] }
 * ```
 */
export function findLimitsEscalation(caller: KeyLimits, key: KeyLimits): Escalation | null {
  const escalation: Escalation = {};
  const sameWindows = key.windowsOf === caller.windowsOf;
  const rateLimits = caller.rateLimits.filter((own) =>
    !key.rateLimits.some((policy) =>
      policy.name === own.name && samePolicy(own, policy) &&
      (sameWindows || own.sharedBy === "tenant")
    )
  ).map((own) => own.name);
  if (rateLimits.length > 0) escalation.rateLimits = rateLimits;
  if (
    (caller.balanceOf !== null && key.balanceOf !== caller.balanceOf) || (caller.pool && !key.pool)
  ) {
    escalation.credits = [key.balanceOf === null && !key.pool ? "no balance" : "separate balance"];
  }
  return Object.keys(escalation).length === 0 ? null : escalation;
}
