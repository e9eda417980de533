/**
 * What the element reads from the admin routes, checked: the configuration,
 * the key summaries and the usage buckets. Malformed entries are dropped.
 *
 * @module
 */
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
  /** Whether rename and usage are served. */
  capabilities: { rename: boolean; usage: boolean };
  /** The CSRF header sent on `POST`, `PATCH` and `DELETE`: name and value. */
  csrf: [string, string];
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
}

const HOUR_MS = 3_600_000;
const isString = (value: unknown): value is string => typeof value === "string";
const record = (value: unknown): Record<string, unknown> =>
  typeof value === "object" && value !== null ? value as Record<string, unknown> : {};
const list = (value: unknown): unknown[] => Array.isArray(value) ? value : [];
const strings = (value: unknown): string[] => list(value).filter(isString);

/** A date from an ISO string, `null` when absent or invalid. */
export function dateOf(value: unknown): Date | null {
  if (!isString(value) || value.length > 64) return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date;
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
  return {
    scopes: list(body.scopes).flatMap((item) => {
      const { scope, description } = record(item);
      return isString(scope)
        ? [{ scope, description: isString(description) ? description : "" }]
        : [];
    }),
    environments: strings(body.environments),
    gracePresets: presets(body.gracePresets),
    expiryPresets: presets(body.expiryPresets),
    capabilities: { rename: capabilities.rename === true, usage: capabilities.usage === true },
    csrf: isString(header) && isString(value) ? [header, value] : [...CSRF_HEADER],
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
      credits: typeof key.credits === "number" && Number.isFinite(key.credits) ? key.credits : null,
    }];
  });
}

/**
 * Accepted requests per hour over the 24 hours up to `now`'s hour, oldest
 * first, from `GET {base}/keys/:id/usage`'s `buckets` (`start`, `accepted`).
 */
export function usageOf(data: unknown, now: number): number[] {
  const counts = Array<number>(24).fill(0);
  const first = now - (now % HOUR_MS) - 23 * HOUR_MS;
  for (const bucket of list(record(data).buckets)) {
    const { start, accepted } = record(bucket);
    const slot = Math.floor(((dateOf(start)?.getTime() ?? -Infinity) - first) / HOUR_MS);
    if (slot >= 0 && slot < 24 && typeof accepted === "number" && accepted > 0) {
      counts[slot] = (counts[slot] ?? 0) + accepted;
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
