/**
 * What the element reads from the admin routes, checked: the configuration,
 * the key summaries and the usage buckets. Malformed entries are dropped.
 *
 * @module
 */

/** A scope resource and its levels, as the server offers them. */
export interface ScopeChoice {
  /** Resource name. */
  resource: string;
  /** Levels, least first. */
  levels: string[];
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

/** Reads `GET {base}/config`'s data. */
export function configOf(data: unknown): ManagerConfig {
  const body = record(data);
  const capabilities = record(body.capabilities);
  return {
    scopes: list(body.scopes).flatMap((item) => {
      const { resource, levels } = record(item);
      return isString(resource) ? [{ resource, levels: strings(levels) }] : [];
    }),
    environments: strings(body.environments),
    gracePresets: presets(body.gracePresets),
    expiryPresets: presets(body.expiryPresets),
    capabilities: { rename: capabilities.rename === true, usage: capabilities.usage === true },
  };
}

/** Reads `GET {base}/keys`'s data. */
export function keysOf(data: unknown): KeyView[] {
  return list(data).flatMap((item) => {
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

/** The last 24 hourly counts of `GET {base}/keys/:id/usage`'s data, oldest first. */
export function usageOf(data: unknown): number[] {
  const buckets = Array.isArray(data) ? data : list(record(data).buckets);
  return buckets.slice(-24).map((bucket) => {
    const { count } = record(bucket);
    return typeof count === "number" && Number.isFinite(count) && count > 0 ? count : 0;
  });
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
