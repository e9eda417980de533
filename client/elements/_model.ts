/**
 * What the element reads from the admin routes, checked: the configuration,
 * the key summaries and the usage buckets. Malformed entries are dropped.
 *
 * @module
 */
import { isCount } from "../_decimal.ts";
import { isoInstantMs } from "../_instant.ts";
import { CSRF_HEADER } from "./_api.ts";

/** A scope a new key may ask for. */
export interface ScopeChoice {
  /** `resource:level`. */
  scope: string;
  /** What it allows, shown beside it. */
  description: string;
}

/** A preset: the value sent and the label shown. */
export interface Preset {
  /** Sent to the server. */
  value: string;
  /** Shown. */
  label: string;
}

/** `GET {base}/config`. */
export interface ManagerConfig {
  /** Scopes a new key may have. */
  scopes: ScopeChoice[];
  /** Environments a new key may have. */
  environments: string[];
  /** Rotation grace presets. */
  gracePresets: Preset[];
  /** Expiry presets. */
  expiryPresets: Preset[];
  /** Preset chosen first in the create form. */
  defaultExpiry: string;
  /** Preset chosen first in the rotate form. */
  defaultGrace: string;
  /** Whether rename (over the name shown: `conditionalRename`) and usage are served. */
  capabilities: { rename: boolean; conditionalRename: boolean; usage: boolean };
  /** What the caller may do (absent from an older server: everything but the audit). */
  can: Can;
  /** The policies and credits a created key carries, when the server says. */
  limits: Limits | null;
  /** The CSRF header sent on `POST`, `PATCH` and `DELETE`: name and value. */
  csrf: [string, string];
}

/** The actions the caller may take (`config.can`). */
export interface Can {
  /** `POST /keys`. */
  create: boolean;
  /** `PATCH /keys/:id`. */
  rename: boolean;
  /** `POST /keys/:id/rotate`. */
  rotate: boolean;
  /** `DELETE /keys/:id`. */
  revoke: boolean;
  /** `GET /audit`. */
  audit: boolean;
}

/** A rate-limit policy a created key carries. */
export interface Policy {
  /** Its name. */
  name: string;
  /** Requests per window. */
  limit: number;
  /** Window length. */
  windowMs: number;
}

/** `config.limits`. */
export interface Limits {
  /** Rate-limit policies. */
  policies: Policy[];
  /** Credits: starting amount, refill and `sharedBy` (`"tenant"`: the tenant's pool), or `null`. */
  credits: {
    amount: number;
    refillAmount: number | null;
    refillEvery: string | null;
    sharedBy: string | null;
  } | null;
}

/** The tenant's shared credit pool (`tenantCredits`). */
export interface Pool {
  /** Remaining credits. */
  credits: number;
  /** Next refill. */
  nextRefillAt: Date | null;
  /** Credits added per refill. */
  refillAmount: number | null;
}

/** `GET {base}/keys`: one page. */
export interface KeyPage {
  /** The page's keys. */
  keys: KeyView[];
  /** The next page's cursor, `null` on the last. */
  nextCursor: string | null;
  /** The tenant's pool, when keys spend one. */
  tenantCredits: Pool | null;
}

/** One key as listed. */
export interface KeyView {
  /** Record id. */
  id: string;
  /** Display name. */
  name: string;
  /** Public prefix. */
  prefix: string;
  /** Environment. */
  environment: string;
  /** Scopes (`resource:level`). */
  scopes: string[];
  /** `active`, `rotating`, `expired` or `revoked`. */
  status: string;
  /** Creation time. */
  createdAt: Date | null;
  /** Last use. */
  lastUsedAt: Date | null;
  /** Expiry. */
  expiresAt: Date | null;
  /** Remaining credits, when the app counts them. */
  credits: number | null;
  /** Credits added per refill. */
  creditsRefillAmount: number | null;
  /** Next refill. */
  creditsNextRefillAt: Date | null;
  /** `"tenant"`: spends the tenant's pool. */
  creditsSharedBy: string | null;
  /** Allowed addresses; empty: any. */
  allowedIpCidrs: string[];
  /** The key that replaced this one. */
  replacedByKeyId: string | null;
  /** The key this one replaced. */
  replacesKeyId: string | null;
}

const HOUR_MS = 3_600_000;
const isString = (value: unknown): value is string => typeof value === "string";
const record = (value: unknown): Record<string, unknown> =>
  typeof value === "object" && value !== null ? value as Record<string, unknown> : {};
const list = (value: unknown): unknown[] => Array.isArray(value) ? value : [];
const strings = (value: unknown): string[] => list(value).filter(isString);
const num = (value: unknown): number | null =>
  typeof value === "number" && Number.isFinite(value) ? value : null;
const text = (value: unknown): string | null => isString(value) ? value : null;

/**
 * A date from an ISO 8601 string (`isoInstantMs`: with its offset, or a date alone as UTC
 * midnight), `null` when absent or anything else (a browser's `Date` would read a local time or
 * guess, each engine its own way).
 */
export function dateOf(value: unknown): Date | null {
  if (!isString(value) || value.length > 64) return null;
  const ms = isoInstantMs(value, true);
  return Number.isNaN(ms) ? null : new Date(ms);
}

function presets(value: unknown): Preset[] {
  return list(value).flatMap((item) => {
    if (isString(item)) return [{ value: item, label: item }];
    const { value: v, label } = record(item);
    return isString(v) ? [{ value: v, label: isString(label) ? label : v }] : [];
  });
}

/** Reads `GET {base}/config`. */
export function configOf(data: unknown): ManagerConfig {
  const body = record(data);
  const capabilities = record(body.capabilities);
  const { header, value } = record(body.csrf);
  const can = record(body.can);
  const allowed = (name: keyof Can) => "can" in body ? can[name] === true : name !== "audit";
  const gracePresets = presets(body.gracePresets);
  const expiryPresets = presets(body.expiryPresets);
  const preferred = (list: Preset[], wanted: unknown, fallback: string) =>
    (list.find((p) => p.value === wanted) ?? list.find((p) => p.value === fallback) ?? list[0])
      ?.value ?? fallback;
  return {
    scopes: list(body.scopes).flatMap((item) => {
      const { scope, description } = record(item);
      return isString(scope)
        ? [{ scope, description: isString(description) ? description : "" }]
        : [];
    }),
    environments: strings(body.environments),
    gracePresets,
    expiryPresets,
    defaultExpiry: preferred(expiryPresets, body.defaultExpiry, "never"),
    defaultGrace: preferred(gracePresets, body.defaultGrace, "24h"),
    capabilities: {
      rename: capabilities.rename === true,
      conditionalRename: capabilities.conditionalRename === true,
      usage: capabilities.usage === true,
    },
    can: {
      create: allowed("create"),
      rename: allowed("rename"),
      rotate: allowed("rotate"),
      revoke: allowed("revoke"),
      audit: allowed("audit"),
    },
    limits: limitsOf(body.limits),
    csrf: isString(header) && isString(value) ? [header, value] : [...CSRF_HEADER],
  };
}

function limitsOf(value: unknown): Limits | null {
  if (typeof value !== "object" || value === null) return null;
  const body = record(value);
  const credits = record(body.credits);
  const amount = num(credits.amount);
  return {
    policies: list(body.policies).flatMap((item) => {
      const { name, limit, windowMs } = record(item);
      const [l, w] = [num(limit), num(windowMs)];
      return isString(name) && l !== null && w !== null && w > 0
        ? [{ name, limit: l, windowMs: w }]
        : [];
    }),
    credits: amount === null ? null : {
      amount,
      refillAmount: num(credits.refillAmount),
      refillEvery: text(credits.refillEvery),
      sharedBy: text(credits.sharedBy),
    },
  };
}

/** Reads `GET {base}/keys`: the keys, `nextCursor` and `tenantCredits`. */
export function pageOf(data: unknown): KeyPage {
  const body = record(data);
  const pool = record(body.tenantCredits);
  const credits = num(pool.credits);
  return {
    keys: keysOf(data),
    nextCursor: isString(body.nextCursor) && body.nextCursor !== "" ? body.nextCursor : null,
    tenantCredits: credits === null ? null : {
      credits,
      nextRefillAt: dateOf(pool.nextRefillAt),
      refillAmount: num(pool.refillAmount),
    },
  };
}

/** Reads `GET {base}/keys` (`{ keys }`) or a list of keys. */
export function keysOf(data: unknown): KeyView[] {
  return list(Array.isArray(data) ? data : record(data).keys).flatMap((item) => {
    const key = record(item);
    if (!isString(key.id) || !isString(key.name) || !isString(key.prefix)) return [];
    return [{
      id: key.id,
      name: key.name,
      prefix: key.prefix,
      environment: isString(key.environment) ? key.environment : "",
      scopes: strings(key.scopes),
      status: isString(key.status) ? key.status : "active",
      createdAt: dateOf(key.createdAt),
      lastUsedAt: dateOf(key.lastUsedAt),
      expiresAt: dateOf(key.expiresAt),
      credits: num(key.credits),
      creditsRefillAmount: num(key.creditsRefillAmount),
      creditsNextRefillAt: dateOf(key.creditsNextRefillAt),
      creditsSharedBy: text(key.creditsSharedBy),
      allowedIpCidrs: strings(key.allowedIpCidrs),
      replacedByKeyId: text(key.replacedByKeyId),
      replacesKeyId: text(key.replacesKeyId),
    }];
  });
}

/**
 * Hourly buckets of the usage shown: the last 24 hours whole, so from the hour 24 hours before
 * `now`'s (counted whole: up to one hour more) to `now`'s.
 */
export const USAGE_HOURS = 25;

/** The first of the `USAGE_HOURS` hours up to `now`'s hour. */
export function firstHour(now: number): number {
  return now - (now % HOUR_MS) - (USAGE_HOURS - 1) * HOUR_MS;
}

/**
 * Accepted requests per hour over the `USAGE_HOURS` hours up to `now`'s hour, oldest
 * first, per key, from `GET {base}/usage?keys=`'s `keys` (`start`, `accepted`:
 * a safe integer of at least 1, else dropped); an hour's sum stops at 2^53 - 1.
 */
export function usageOf(data: unknown, now: number): Map<string, number[]> {
  const usage = new Map<string, number[]>();
  for (const [id, buckets] of Object.entries(record(record(data).keys))) {
    if (Array.isArray(buckets)) usage.set(id, hourly(buckets, now));
  }
  return usage;
}

function hourly(buckets: unknown[], now: number): number[] {
  const counts = Array<number>(USAGE_HOURS).fill(0);
  const first = firstHour(now);
  for (const bucket of buckets) {
    const { start, accepted } = record(bucket);
    const slot = Math.floor(((dateOf(start)?.getTime() ?? -Infinity) - first) / HOUR_MS);
    if (slot >= 0 && slot < USAGE_HOURS && isCount(accepted, 1)) {
      counts[slot] = Math.min((counts[slot] ?? 0) + accepted, Number.MAX_SAFE_INTEGER);
    }
  }
  return counts;
}

/** Whether a key expires within `days` of `now` (and has not yet). */
export function expiresSoon(key: KeyView, now: number, days = 7): boolean {
  const at = key.expiresAt?.getTime();
  return at !== undefined && at > now && at - now <= days * 86_400_000 &&
    key.status !== "revoked";
}

/** `template` with each `{name}` replaced by `values[name]`. */
export function fill(template: string, values: Record<string, string>): string {
  return template.replace(/\{(\w{1,20})\}/g, (match, name: string) => values[name] ?? match);
}

/** A record of the audit log (`GET {base}/audit`), as the Activity view shows it. */
export interface ActivityRecord {
  /** What happened, e.g. `key.revoked`. */
  action: string;
  /** Who did it. */
  actor: string;
  /** When. */
  at: Date;
  /** The key (`null`: tenant-wide). */
  keyId: string | null;
  /** The key's prefix. */
  prefix: string | null;
  /** `success` or `refused`. */
  outcome: "success" | "refused";
}

/** One page of the audit log. */
export interface ActivityPage {
  /** Newest first. */
  records: ActivityRecord[];
  /** The next page's cursor, `null` on the last. */
  nextCursor: string | null;
}

/** Reads `GET {base}/audit`: records without an action, actor or time are dropped. */
export function activityOf(data: unknown): ActivityPage {
  const body = record(data);
  const records = list(body.records).flatMap((item): ActivityRecord[] => {
    const entry = record(item);
    const at = dateOf(entry.at);
    const action = text(entry.action);
    const actor = text(entry.actor);
    if (!at || action === null || actor === null) return [];
    const outcome = entry.outcome === "refused" ? "refused" : "success";
    return [{ action, actor, at, keyId: text(entry.keyId), prefix: text(entry.prefix), outcome }];
  });
  return { records, nextCursor: text(body.nextCursor) };
}
