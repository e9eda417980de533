/**
 * Types of the admin routes: the framework-free request and response, the
 * options, the hooks and the presets (routes and JSON shapes:
 * docs/settings-page.md).
 *
 * @module
 */
import type { AuditRecord } from "../audit/types.ts";
import type { ApiKeysService } from "../service.ts";
import type {
  ApiKeyCreditsInput,
  ApiKeyRateLimitPolicy,
  ApiKeySummary,
  Environment,
} from "../types.ts";
import type { ApiKeyUsageCounts } from "../metering/usage.ts";
import type { Escalation, KeyPowers } from "./no_escalation.ts";

/**
 * What a request asks to do; `canManage` receives it.
 *
 * @example
 * ```ts
 * import type { AdminAction } from "@saferoute/api-kit/api-keys/admin";
 * const action: AdminAction = "rotate";
 * ```
 */
export type AdminAction =
  | "config"
  | "list"
  | "read"
  | "create"
  | "rename"
  | "revoke"
  | "rotate"
  | "usage"
  | "audit";

/**
 * How long a rotated key keeps working.
 *
 * @example
 * ```ts
 * import type { GracePreset } from "@saferoute/api-kit/api-keys/admin";
 * const grace: GracePreset = "1h";
 * ```
 */
export type GracePreset = "none" | "1h" | "24h" | "7d";

/**
 * How long a created key lives (`never`: no expiry).
 *
 * @example
 * ```ts
 * import type { ExpiryPreset } from "@saferoute/api-kit/api-keys/admin";
 * const expiry: ExpiryPreset = "90d";
 * ```
 */
export type ExpiryPreset = "7d" | "30d" | "90d" | "1y" | "never";

/**
 * `GET /keys?status=`: the keys listed by their status now (`all`: revoked
 * ones included). Absent: every key but the revoked ones.
 *
 * @example
 * ```ts
 * import type { KeyStatusFilter } from "@saferoute/api-kit/api-keys/admin";
 * const status: KeyStatusFilter = "revoked";
 * ```
 */
export type KeyStatusFilter = "active" | "rotating" | "expired" | "revoked" | "all";

/**
 * `GET /keys?sort=`: the order of the list (default `created_desc`, newest
 * first); `last_used_desc` lists the keys never used last.
 *
 * @example
 * ```ts
 * import type { KeySort } from "@saferoute/api-kit/api-keys/admin";
 * const sort: KeySort = "name_asc";
 * ```
 */
export type KeySort = "created_desc" | "created_asc" | "name_asc" | "last_used_desc";

/**
 * What `canManage` decides on: the caller's tenant, the key acted on (`null`
 * for `config`, `list` and `create`, and for each action `GET /config` asks
 * about: `create`, `rename`, `rotate`, `revoke`, `audit`) and, for `create`,
 * the key asked for.
 *
 * @example
 * ```ts
 * import type { AdminTarget } from "@saferoute/api-kit/api-keys/admin";
 * const target: AdminTarget = { tenantId: "acme", key: null, proposed: null };
 * ```
 */
export interface AdminTarget {
  /** The tenant `tenantOf` answered. */
  tenantId: string;
  /** The key of the route's `:id`, read in that tenant; `null` when none (see above). */
  key: ApiKeySummary | null;
  /** The key `create` would issue (the values written); `null` otherwise, also in `GET /config`. */
  proposed: KeyPowers | null;
}

/**
 * One check of the policy: a key the request would issue (`new`) or act on
 * (`target`).
 *
 * @example
 * ```ts
 * import type { AdminPolicyCheck } from "@saferoute/api-kit/api-keys/admin";
 * const check: AdminPolicyCheck<Request> = {
 *   request: new Request("https://example.com"), tenantId: "acme", action: "create", role: "new",
 *   key: { environment: "test", scopes: ["projects:read"], allowedIpCidrs: [], expiresAt: null },
 * };
 * ```
 */
export interface AdminPolicyCheck<R> {
  /** The app's request. */
  request: R;
  /** The caller's tenant. */
  tenantId: string;
  /** The action. */
  action: AdminAction;
  /** `new`: the key to issue; `target`: the key acted on. */
  role: "new" | "target";
  /** The key's powers. */
  key: KeyPowers;
}

/**
 * A policy: `null` allows, an `Escalation` refuses (403
 * `api_key_escalation_refused`, the escalation in `details.exceeds`).
 *
 * @example
 * ```ts
 * import type { AdminPolicy } from "@saferoute/api-kit/api-keys/admin";
 * const testKeysOnly: AdminPolicy<Request> = ({ key }) =>
 *   key.environment === "test" ? null : { environment: [key.environment] };
 * ```
 */
export type AdminPolicy<R> = (
  check: AdminPolicyCheck<R>,
) => Escalation | null | Promise<Escalation | null>;

/**
 * What `keyLimits` sets on a key created through the routes: the app's
 * policies and credits for the caller's tenant or plan.
 *
 * @example
 * ```ts
 * import type { AdminKeyLimits } from "@saferoute/api-kit/api-keys/admin";
 * const free: AdminKeyLimits = {
 *   rateLimits: [{ name: "minute", limit: 60, windowMs: 60_000 }],
 *   credits: { remaining: 1_000 },
 * };
 * ```
 */
export interface AdminKeyLimits {
  /**
   * Policies added to the caller's key's (which the new key always keeps as
   * they are, tenant-shared ones included: a policy named like one of them is
   * the caller's).
   */
  rateLimits?: readonly ApiKeyRateLimitPolicy[];
  /**
   * A balance of the key's own, or the tenant's shared pool (`sharedBy:
   * "tenant"`); only when the caller's key spends no credits (a key minted by
   * a key with credits spends its creator's balance and pool).
   */
  credits?: ApiKeyCreditsInput;
}

/**
 * A scope the server offers to `create`, with an optional text for the page.
 *
 * @example
 * ```ts
 * import type { AdminScopeOffer } from "@saferoute/api-kit/api-keys/admin";
 * const offer: AdminScopeOffer = { scope: "projects:read", description: "Read projects" };
 * ```
 */
export interface AdminScopeOffer {
  /** A flat scope, `resource:level`. */
  scope: string;
  /** What it allows, for people. */
  description?: string;
}

/**
 * Options of `createApiKeysAdminHandler`; `R` is the app's request type.
 *
 * @example
 * ```ts
 * import type { ApiKeysAdminOptions } from "@saferoute/api-kit/api-keys/admin";
 * declare const service: ApiKeysAdminOptions<Request>["service"];
 * const options: ApiKeysAdminOptions<Request> = {
 *   service,
 *   scopes: ["projects:read", "projects:write"],
 *   tenantOf: (request) => request.headers.get("x-tenant"),
 *   canManage: () => true,
 *   policy: () => null,
 * };
 * ```
 */
export interface ApiKeysAdminOptions<R> {
  /** The key service. */
  service: ApiKeysService;
  /** The caller's tenant, from the app's own authentication; `null` answers 401. */
  tenantOf: (request: R) => string | null | undefined | Promise<string | null | undefined>;
  /** Called for every action; `false` answers 403 `forbidden`, a throw 500. */
  canManage: (request: R, action: AdminAction, target: AdminTarget) => boolean | Promise<boolean>;
  /**
   * Id of the API key the caller authenticated with, for the default policy
   * (no escalation over that key) and, with any policy, the limits: a key it
   * creates shares that key's limits, a key it rotates must be at least as
   * limited (docs/security.md). Required unless `policy` is given.
   */
  callerKeyIdOf?: (request: R) => string | null | undefined | Promise<string | null | undefined>;
  /** The policy; default: no escalation over the caller's key (docs/security.md). */
  policy?: AdminPolicy<R>;
  /**
   * The scopes `create` may ask for (flat `resource:level`, resources as the
   * service's: 1 to 128 of `[A-Za-z0-9._/-]`), 1 to 200.
   */
  scopes: readonly (string | AdminScopeOffer)[];
  /** Environments `create` may ask for; the first is the default (default `["live", "test"]`). */
  environments?: readonly Environment[];
  /** Rotation grace choices (default all: `none`, `1h`, `24h`, `7d`). */
  gracePresets?: readonly GracePreset[];
  /**
   * Expiry choices of `create` (default: those of `7d`, `30d`, `90d`, `1y`, `never` the service's
   * TTL policy allows); one the policy refuses is a `TypeError`.
   */
  expiryPresets?: readonly ExpiryPreset[];
  /** The expiry `create` uses when the body names none; one of `expiryPresets` (default the TTL policy's default, `never` without one, when offered, else the first). */
  defaultExpiry?: ExpiryPreset;
  /** The grace `rotate` uses when the body names none; one of `gracePresets` (default `24h` when offered, else the first). */
  defaultGrace?: GracePreset;
  /**
   * The header state-changing routes require (default `{ header:
   * "x-requested-with", value: "api-keys-manager" }`). `false` turns the CSRF
   * check off: only for apps whose admin callers authenticate with a header
   * a browser never sends by itself (an API key, a bearer token). A
   * CORS-safelisted or forbidden header name (`Content-Type`, `Origin`,
   * `Sec-*`...), or a value not printable ASCII, is a `TypeError`.
   */
  csrf?: { header?: string; value?: string } | false;
  /**
   * Origins (exact `scheme://host[:port]`, e.g. `https://app.example.com`)
   * whose `Sec-Fetch-Site: same-site` requests pass the CSRF check: a
   * dashboard on a sibling subdomain of the API. The CSRF header is still
   * required; `cross-site` is always refused. Default: none.
   */
  allowedOrigins?: readonly string[];
  /**
   * Names the acting user or service (1 to 200 characters, not only spaces,
   * printable as a key name is): the `createdBy` of keys created and rotated
   * through the routes. A throw or another answer
   * is a 500 `internal_error` (the error to `onError`) and nothing is
   * written. Omitted: `createdBy` stays `null`.
   */
  actorOf?: (request: R) => string | Promise<string>;
  /**
   * The app's rate-limit policies and credits for a key created through the
   * routes (per tenant or plan); `null` or `undefined`: none. Whatever it
   * answers, a key created by a caller with a key (`callerKeyIdOf`) keeps
   * that key's policies as they are (one of the same name answered here is
   * the caller's), counts on its windows and spends its balance; a separate
   * balance (the tenant's shared pool is none for a caller spending it) is
   * refused as `api_key_escalation_refused` (docs/security.md). A throw or
   * another answer is a 500, and so are credits or a tenant-shared policy the
   * service refuses (docs/settings-page.md, "Changing a tenant's plan").
   */
  keyLimits?: (
    request: R,
    tenantId: string,
  ) => AdminKeyLimits | null | undefined | Promise<AdminKeyLimits | null | undefined>;
  /** Largest request body in bytes (default 16,384). */
  maxBodyBytes?: number;
  /**
   * Receives the unexpected errors answered as 500 and the storage failures
   * answered as 503 (`ApiKeyStorageError`, a new key read back as written
   * included); its throw or rejection changes no answer (default: one
   * `console.error` line with the error's name and message, credentials and
   * keys hidden, never its `cause`).
   */
  onError?: (error: unknown) => void;
}

/**
 * A request as every binding gives it: `path` is relative to the mount point
 * (`/keys/abc/rotate`).
 *
 * @example
 * ```ts
 * import type { AdminRequest } from "@saferoute/api-kit/api-keys/admin";
 * const request: AdminRequest = {
 *   method: "DELETE", path: "/keys/abc", query: () => null, headers: () => null, body: "",
 * };
 * ```
 */
export interface AdminRequest {
  /** HTTP method. */
  method: string;
  /** Path below the mount point, starting with `/`. */
  path: string;
  /** A query parameter; one given more than once: its values joined with commas. */
  query: (name: string) => string | null | undefined;
  /** Case-insensitive header lookup. */
  headers: (name: string) => string | null | undefined;
  /**
   * The body: bytes or text (a binding may stop reading past `maxBodyBytes + 1`);
   * `undefined` when the binding got one it could not read (a failed read, a media
   * type its framework left unparsed): a route that reads a body answers 400.
   */
  body: Uint8Array | string | null | undefined;
}

/**
 * An answer: status, headers, JSON body.
 *
 * @example
 * ```ts
 * import type { AdminResponse } from "@saferoute/api-kit/api-keys/admin";
 * const answer: AdminResponse = { status: 204, headers: {}, body: "" };
 * ```
 */
export interface AdminResponse {
  /** HTTP status. */
  status: number;
  /** Response headers. */
  headers: Record<string, string>;
  /** JSON body. */
  body: string;
}

/**
 * The admin routes: `undefined` for a path that is none of them.
 *
 * @example
 * ```ts
 * import type { ApiKeysAdminHandler } from "@saferoute/api-kit/api-keys/admin";
 * declare const handle: ApiKeysAdminHandler<Request>;
 * ```
 */
export interface ApiKeysAdminHandler<R> {
  /** Answers one request; `native` is what the hooks receive. */
  (request: AdminRequest, native: R): Promise<AdminResponse | undefined>;
  /** Largest body read, in bytes. */
  readonly maxBodyBytes: number;
  /**
   * Whether `path` is one of the routes' paths (for any method: another
   * answers 405). The handler answers `undefined` for any other, so a
   * binding reads a request's body only when this is `true`: the app's own
   * routes below the mount point keep theirs.
   */
  hasRoute(path: string): boolean;
  /**
   * Requests this handler refused for CSRF since it was made: counted, never
   * each recorded in the audit log (a cross-site page can send them at will).
   */
  readonly csrfRefused: number;
}

/**
 * A key as the admin routes answer it (dates as ISO 8601 strings; never the
 * secret).
 *
 * @example
 * ```ts
 * import type { KeyView } from "@saferoute/api-kit/api-keys/admin";
 * const names = (keys: KeyView[]) => keys.map((key) => `${key.name} (${key.prefix})`);
 * ```
 */
export interface KeyView {
  /** Record id. */
  id: string;
  /** Display name. */
  name: string;
  /** Environment. */
  environment: Environment;
  /** Public prefix, never the secret. */
  prefix: string;
  /** Flat `resource:level` scopes. */
  scopes: string[];
  /** Allowed addresses; empty: any address. */
  allowedIpCidrs: string[];
  /** Status at the time of the answer. */
  status: ApiKeySummary["status"];
  /** Creation time. */
  createdAt: string;
  /** Last use; `null`: never used. */
  lastUsedAt: string | null;
  /** Expiry; `null`: never expires. */
  expiresAt: string | null;
  /** Revocation time, or `null`. */
  revokedAt: string | null;
  /** Rotation time, or `null`. */
  rotatedAt: string | null;
  /** The key that replaced this one, or `null`. */
  replacedByKeyId: string | null;
  /** Who created it, or `null`. */
  createdBy: string | null;
  /** The key this one replaced (it is that key's rotation), or `null` (also when the storage cannot tell). */
  replacesKeyId: string | null;
  /**
   * Only for a key with credits (a service with a limiter): its own balance,
   * or its tenant's pool when it spends only that (`creditsSharedBy`).
   */
  credits?: number;
  /** With `credits`: the next refill, `null` when none. */
  creditsNextRefillAt?: string | null;
  /** With `credits`: the amount each refill sets, `null` without a refill. */
  creditsRefillAmount?: number | null;
  /** `"tenant"`: `credits` is the tenant's shared pool (see `KeyList.tenantCredits`). */
  creditsSharedBy?: "tenant";
}

/**
 * Which optional routes the server serves.
 *
 * @example
 * ```ts
 * import type { Capabilities } from "@saferoute/api-kit/api-keys/admin";
 * const canRename = (capabilities: Capabilities) => capabilities.rename;
 * ```
 */
export interface Capabilities {
  /** `PATCH /keys/:id` works (the storage has `renameForTenant`). */
  rename: boolean;
  /**
   * `PATCH /keys/:id` takes `expectedName`: renames only while the key has
   * that name, else 409 `api_key_name_changed` (the storage has
   * `replaceNameForTenant` too; without it, a body with `expectedName` is a 501).
   */
  conditionalRename: boolean;
  /** `GET /keys/:id/usage` works (the service records usage). */
  usage: boolean;
}

/**
 * The actions the caller may take (`canManage` with `target.key: null`; each
 * action is still checked on its key).
 *
 * @example
 * ```ts
 * import type { AdminPermissions } from "@saferoute/api-kit/api-keys/admin";
 * const showCreate = (can: AdminPermissions) => can.create;
 * ```
 */
export interface AdminPermissions {
  /** `POST /keys`. */
  create: boolean;
  /** `PATCH /keys/:id` (false also when the route is not served). */
  rename: boolean;
  /** `POST /keys/:id/rotate`. */
  rotate: boolean;
  /** `DELETE /keys/:id`. */
  revoke: boolean;
  /** The audit log. */
  audit: boolean;
}

/**
 * The limits a key created by the caller will carry: its rate-limit
 * policies and credits.
 *
 * @example
 * ```ts
 * import type { AdminKeyLimitsView } from "@saferoute/api-kit/api-keys/admin";
 * const perMinute = (limits: AdminKeyLimitsView) =>
 *   limits.policies.find((policy) => policy.windowMs === 60_000)?.limit;
 * ```
 */
export interface AdminKeyLimitsView {
  /** Each policy: at most `limit` requests per `windowMs`. */
  policies: { name: string; limit: number; windowMs: number }[];
  /**
   * The credits it spends (the caller's balance when the caller's key has
   * credits), `null` when none: `amount` the balance now, `refillAmount`
   * and `refillEvery` the refill (`daily`, `monthly`, `monthly:<day>` or
   * `<ms>ms`), `null` without one; `sharedBy: "tenant"` when it is the
   * tenant's shared pool (spent by all its keys on the pool).
   */
  credits: {
    amount: number;
    refillAmount: number | null;
    refillEvery: string | null;
    sharedBy?: "tenant";
  } | null;
}

/**
 * `GET /config`: what the server offers.
 *
 * @example
 * ```ts
 * import type { AdminConfig } from "@saferoute/api-kit/api-keys/admin";
 * const scopesOf = (config: AdminConfig) => config.scopes.map((offer) => offer.scope);
 * ```
 */
export interface AdminConfig {
  /** What `create` may ask for: the offered scopes the caller may grant. */
  scopes: AdminScopeOffer[];
  /** Environments a new key may have (those the caller may grant); the first is the default. */
  environments: Environment[];
  /** Rotation grace choices. */
  gracePresets: GracePreset[];
  /** `options.defaultGrace`, else `"24h"` when offered, else the first. */
  defaultGrace: GracePreset;
  /** Expiry choices of `create`. */
  expiryPresets: ExpiryPreset[];
  /** `options.defaultExpiry`, else the TTL policy's default (`"never"` without one) when offered, else the first. */
  defaultExpiry: ExpiryPreset;
  /** Optional routes served. */
  capabilities: Capabilities;
  /** The header to send on `POST`, `PATCH` and `DELETE`; `null` when the check is off. */
  csrf: { header: string; value: string } | null;
  /** What the caller may do. */
  can: AdminPermissions;
  /** What a key the caller creates will carry; `null` when it has no limits. */
  limits: AdminKeyLimitsView | null;
}

/**
 * `GET /keys`: one page of the tenant's keys (`limit` 1 to 100, default 25;
 * `cursor` the previous page's `nextCursor`; `q` a name substring, case
 * aside, or the start of a prefix; `status`, `environment`, `sort`).
 *
 * @example
 * ```ts
 * import type { KeyList } from "@saferoute/api-kit/api-keys/admin";
 * const count = (list: KeyList) => list.keys.length;
 * ```
 */
export interface KeyList {
  /** The keys. */
  keys: KeyView[];
  /** The `cursor` of the next page, `null` on the last. */
  nextCursor: string | null;
  /** Optional routes served. */
  capabilities: Capabilities;
  /**
   * The tenant's shared credit pool, when its keys spend one (a service with
   * a limiter): balance, next refill and refill amount; else `null`.
   */
  tenantCredits?: {
    credits: number;
    nextRefillAt: string | null;
    refillAmount: number | null;
  } | null;
}

/**
 * `POST /keys` body.
 *
 * @example
 * ```ts
 * import type { CreateKeyBody } from "@saferoute/api-kit/api-keys/admin";
 * const body: CreateKeyBody = { name: "CI", scopes: ["projects:read"], expiresIn: "90d" };
 * ```
 */
export interface CreateKeyBody {
  /** 1 to 200 characters. */
  name: string;
  /** 1 to 50, each one of the config's scopes. */
  scopes: string[];
  /** One of the config's environments; default the first. */
  environment?: Environment;
  /** One of the config's expiry presets; default `defaultExpiry`. Not with `expiresAt`. */
  expiresIn?: ExpiryPreset;
  /**
   * An expiry date and time instead of a preset: ISO 8601 with its offset
   * (`2030-01-31T12:00:00Z`), in the future, within the service's TTL policy
   * and the no-escalation rule. Not with `expiresIn` (400).
   */
  expiresAt?: string;
  /** Up to 50; omitted: any address. */
  allowedIpCidrs?: string[];
}

/**
 * `POST /keys` answer (201): the secret, in this answer only.
 *
 * @example
 * ```ts
 * import type { IssuedKey } from "@saferoute/api-kit/api-keys/admin";
 * const show = (issued: IssuedKey) => `${issued.record.name}: ${issued.key}`;
 * ```
 */
export interface IssuedKey {
  /** The secret: in this answer only, never again. */
  key: string;
  /** The new key. */
  record: KeyView;
}

/**
 * `POST /keys/:id/rotate` body.
 *
 * @example
 * ```ts
 * import type { RotateKeyBody } from "@saferoute/api-kit/api-keys/admin";
 * const body: RotateKeyBody = { grace: "1h" };
 * ```
 */
export interface RotateKeyBody {
  /** One of the config's grace presets; default `defaultGrace`. */
  grace?: GracePreset;
  /** Name of the new key; default the old name. */
  name?: string;
}

/**
 * `PATCH /keys/:id`'s body (a key name is 1 to 200 characters, not only spaces).
 *
 * @example
 * ```ts
 * import type { RenameKeyBody } from "@saferoute/api-kit/api-keys/admin";
 * const body: RenameKeyBody = { name: "CI deploy", expectedName: "CI" };
 * ```
 */
export interface RenameKeyBody {
  /** The new name. */
  name: string;
  /**
   * Renames only while the key's name is this one (the name the page shows),
   * atomically; else 409 `api_key_name_changed`. `null` or omitted: no
   * precondition. Needs `capabilities.conditionalRename` (else 501).
   */
  expectedName?: string | null;
}

/**
 * `POST /keys/:id/rotate` answer (201).
 *
 * @example
 * ```ts
 * import type { RotatedKey } from "@saferoute/api-kit/api-keys/admin";
 * const until = (rotated: RotatedKey) => new Date(rotated.graceExpiresAt);
 * ```
 */
export interface RotatedKey extends IssuedKey {
  /** The key replaced. */
  replacedKeyId: string;
  /** When the old key stops working. */
  graceExpiresAt: string;
}

/**
 * `GET /keys/:id/usage` answer: the service's usage buckets, dates as ISO strings.
 *
 * @example
 * ```ts
 * import type { UsageAnswer } from "@saferoute/api-kit/api-keys/admin";
 * const accepted = (usage: UsageAnswer) => usage.buckets.reduce((n, b) => n + b.accepted, 0);
 * ```
 */
export interface UsageAnswer {
  /** The key read. */
  keyId: string;
  /** Bucket size. */
  granularity: "hour" | "day";
  /** Start of the first bucket read: the asked `from` floored to a whole UTC hour or day (ISO 8601). */
  from: string;
  /** End of the last bucket read, excluded: the asked `to` rounded up likewise (ISO 8601). */
  to: string;
  /** One per bucket, oldest first. */
  buckets: (ApiKeyUsageCounts & { start: string })[];
}

/** A record of the audit log as `GET /audit` answers it (see `AuditRecord`). */
export type AuditRecordView = AuditRecord;

/** The answer of `GET /audit`: a page of the tenant's audit log, newest first. */
export interface AuditPage {
  /** The records, newest first. */
  records: AuditRecordView[];
  /** The `cursor` of the next (older) page, `null` at the end. */
  nextCursor: string | null;
}

/**
 * `GET /usage?keys=<id>,<id>…` answer (up to 100 keys of the tenant, one
 * request for a page): each key's buckets, as `UsageAnswer`'s.
 *
 * @example
 * ```ts
 * import type { UsageBatchAnswer } from "@saferoute/api-kit/api-keys/admin";
 * const total = (usage: UsageBatchAnswer, id: string) =>
 *   (usage.keys[id] ?? []).reduce((n, bucket) => n + bucket.accepted, 0);
 * ```
 */
export interface UsageBatchAnswer {
  /** Bucket size. */
  granularity: "hour" | "day";
  /** Start of the buckets read, as `UsageAnswer.from` (ISO 8601). */
  from: string;
  /** End of the buckets read, excluded, as `UsageAnswer.to` (ISO 8601). */
  to: string;
  /** Per key id asked for: one bucket per hour or day, oldest first. */
  keys: Record<string, (ApiKeyUsageCounts & { start: string })[]>;
}
