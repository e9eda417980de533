/**
 * Data types of the API-key component: records, contexts, inputs and results,
 * and the limits of the inputs.
 *
 * @module
 */

import type {
  CounterResult,
  CreditRefill,
  Credits,
  RateLimitPolicy,
  RateLimitPolicyResult,
} from "../rate_limits/mod.ts";

/**
 * A rate-limit policy of a key: counted per key, or with `sharedBy: "tenant"`
 * on one counter for every key of the tenant (see docs/rate-limits.md).
 */
export interface ApiKeyRateLimitPolicy extends RateLimitPolicy {
  /** `"tenant"`: one counter per tenant and policy name (default: one per key). */
  readonly sharedBy?: "tenant";
}

/** One policy's answer to a request, with its window (for `RateLimit-Policy`). */
export interface ApiKeyRateLimitResult extends RateLimitPolicyResult {
  /** Window length in ms. */
  readonly windowMs: number;
}

/**
 * A key's credits as stored (kept only by a storage with `storesCredits`): the
 * balance last written back, when, its refill rule, and whose balance the key
 * spends (a rotated key and its replacement spend one balance).
 */
export interface ApiKeyCredits extends Credits {
  /** When `remaining` was read; refills due since then apply at the next spend. */
  updatedAt: Date;
  /** Id of the key whose balance this key spends (the first key of its rotation chain); absent: its own. */
  balanceKeyId?: string;
  /**
   * `"tenant"`: these credits are the tenant's shared pool (one balance every
   * key of the tenant spends; this record keeps a copy of its rule and of the
   * balance last written back), and the key has no balance of its own.
   */
  sharedBy?: "tenant";
  /** The tenant's shared pool the key spends besides its own balance (a copy, as with `sharedBy`). */
  pool?: ApiKeyPoolCredits;
}

/** The tenant's shared credit pool as a key's record keeps it: its rule and the balance last written back. */
export interface ApiKeyPoolCredits extends Credits {
  /** When `remaining` was read; refills due since then apply at the next spend. */
  updatedAt: Date;
}

/**
 * Credits of `create`, `rotate` and the admin routes' `keyLimits`: a balance
 * of the key's own, the tenant's shared pool (`sharedBy: "tenant"`), or both
 * (a balance of its own with `pool`); every spend takes from each, all or
 * nothing. A pool's `remaining` starts it when the tenant has none yet; a
 * tenant's keys keep one refill rule for it (see docs/rate-limits.md).
 */
export interface ApiKeyCreditsInput extends Credits {
  /** `"tenant"`: the key spends only the tenant's shared pool. */
  sharedBy?: "tenant";
  /** The tenant's shared pool, spent besides the key's own balance. */
  pool?: Credits;
}

/** Whose balance a credit answer, refusal or event is about: the key's own or the tenant's pool. */
export type ApiKeyCreditBalanceOwner = "key" | "tenant";

// Longest accepted key name (and search), shared with the settings element.
export { MAX_API_KEY_NAME_LENGTH } from "../client/elements/_limits.ts";

/** Default grace period of `rotate`: 24 hours. */
export const DEFAULT_GRACE_PERIOD_MS = 24 * 60 * 60 * 1000;

/** Key environment. */
export type Environment = "live" | "test";

/** Scope level. `write` implies `read`. */
export type ScopeLevel = "read" | "write";

/** A scope: a resource and a level. Flattened form: `resource:level`. */
export interface Scope {
  /** Resource name: 1 to 128 characters of `[A-Za-z0-9._/-]`, matched exactly (case-sensitive). */
  resource: string;
  /** Access level. */
  level: ScopeLevel;
}

/** A scope a route requires. */
export interface RequiredScope {
  /** Resource name. */
  resource: string;
  /** Minimum level. */
  level: ScopeLevel;
}

/**
 * Request-level checks of `authorize` and `authorizeRequest`, applied after
 * verification in this order: IP allowlist, environment, scope.
 */
export interface AuthorizeOptions {
  /** Client address; an allowlisted key refuses an unknown address. */
  clientIp?: string;
  /** Environment the route requires. */
  requiredEnvironment?: Environment;
  /** Scope the route requires. */
  requiredScope?: RequiredScope;
  /**
   * Units of this request (a safe integer of 0–10^15, `MAX_CREDITS`; another
   * value is a `TypeError`, with a `limiter` or without): counted on each policy with a
   * `limiter` (default: each policy's `cost`; 0 only checks) and in the usage
   * cost total (default 1).
   */
  cost?: number;
  /**
   * With a `limiter`: the key's policies this route counts (names; others are skipped; a name
   * a key with policies lacks is a `TypeError`, answered 500), or the route's own policies,
   * counted with the key's (a route policy replaces a key policy of its name), or `false`: the
   * route counts no policy and spends no credits (the default of the admin routes).
   */
  rateLimits?: string | readonly string[] | readonly ApiKeyRateLimitPolicy[] | false;
  /**
   * The framework request, passed to the `rateLimitResolver`. An object is charged once per
   * service: a later authorization of it with the same key and the same `cost` and `rateLimits`
   * answers the first's context (its limits' answers) once its own IP allowlist, environment and
   * scope pass, spending and recording nothing again; its refusal replaces the first's accepted
   * usage count (one outcome per request). One made while the first runs (concurrent checks)
   * waits for it, then goes the same way; if the first is refused, it is checked and charged on
   * its own. One asking another charge is charged on its own.
   */
  request?: unknown;
}

/** Outcome of one verification, reported in the `api_key.verification` metric. */
export type ApiKeyVerificationOutcome =
  | "success"
  | "malformed"
  | "invalid"
  | "revoked"
  | "expired"
  | "error";

/**
 * How a record's `hash` was made. `hmac-sha256` (base64url HMAC-SHA-256 of
 * the secret keyed by the pepper) is the current scheme and the meaning of an
 * absent `hashScheme`; every new hash uses it. The legacy schemes come only
 * from imports and are upgraded on use: `sha256-pepper` (lowercase hex
 * SHA-256 of `secret + pepper`, as `@nestarc/api-keys` stores) and `sha256`
 * (lowercase hex SHA-256 of the secret alone, pepper version 0: a temporary
 * deviation from peppered storage).
 */
export type ApiKeyHashScheme = "hmac-sha256" | "sha256-pepper" | "sha256";

/** A stored API key. The secret is never stored, only its peppered hash. */
export interface ApiKeyRecord {
  /** Record id. */
  id: string;
  /** Owning tenant. */
  tenantId: string;
  /** Display name. */
  name: string;
  /** Environment. */
  environment: Environment;
  /** Public lookup prefix (`findByPrefix`). */
  prefix: string;
  /** Peppered hash of the secret part. */
  hash: string;
  /** Scheme of `hash`; absent means `hmac-sha256` (see `ApiKeyHashScheme`). */
  hashScheme?: ApiKeyHashScheme;
  /** Pepper version used for `hash` (0 for the `sha256` scheme, which has none). */
  pepperVersion: number;
  /** Rate-limit policies (validated; kept only by a storage with `storesRateLimits`). */
  rateLimits?: ApiKeyRateLimitPolicy[];
  /**
   * Id of the key whose window counters this key counts on (the first key of
   * its rotation chain, so a key and its successors share their windows);
   * absent: its own. Kept by a storage with `storesRateLimits`.
   */
  rateLimitKeyId?: string;
  /**
   * Name of the legacy layout (`legacyKeyLayouts`) the key was imported in;
   * absent: the current layout. Bound only by a storage with `storesLayout`.
   */
  layout?: string;
  /** Credits (kept only by a storage with `storesCredits`). */
  credits?: ApiKeyCredits;
  /** Flattened scopes (`resource:level`). */
  scopes: string[];
  /** Canonical allowed CIDRs; empty or absent means any address. */
  allowedIpCidrs?: string[];
  /** Last successful use (debounced). */
  lastUsedAt: Date | null;
  /** Expiry; `null` means no expiry. */
  expiresAt: Date | null;
  /** When the key was revoked. */
  revokedAt: Date | null;
  /** When the key was rotated. */
  rotatedAt: Date | null;
  /** Id of the key that replaced this one. */
  replacedByKeyId: string | null;
  /** Who created the key. */
  createdBy: string | null;
  /** Creation time. */
  createdAt: Date;
}

/**
 * A record as code written for `@nestarc/api-keys` 0.1 builds one: `rotatedAt`
 * and `replacedByKeyId` (added later) may be absent and then read as `null`.
 * What `ApiKeyStorage.insert` takes and its lookups may answer.
 */
export type ApiKeyRecordInput = Omit<ApiKeyRecord, "rotatedAt" | "replacedByKeyId"> & {
  /** When it was rotated; absent reads as `null`. */
  rotatedAt?: Date | null;
  /** Id of the key that replaced it; absent reads as `null`. */
  replacedByKeyId?: string | null;
};

/**
 * The condition of a key at an instant: `revoked` wins, then `expired`
 * (`expiresAt` reached; a rotated key once its grace ended), then `rotating`
 * (a rotated key still in its grace), else `active`.
 */
export type ApiKeyStatus = "active" | "rotating" | "expired" | "revoked";

/** A key's credit balance now, as `updateCredits` and `listSummaries` answer it. */
export interface ApiKeyCreditBalance {
  /** Credits left. */
  remaining: number;
  /** When the next refill sets the balance to its amount; `null` without a refill. */
  nextRefillAt: Date | null;
}

/**
 * A change of a key's own balance or of a tenant's pool (`updateCredits`):
 * `{ set: n }` or `{ add: n }`, or a new refill rule (`refill` `null`: no
 * refills) in one store step, the new rule's first refill its next boundary
 * after the change: `{ set, refill }` sets the balance at the change;
 * `{ refill }` alone keeps it (the refill the old rule owes taken first).
 *
 * @example
 * ```ts
 * import type { ApiKeyCreditChange } from "./types.ts";
 * const upgrade: ApiKeyCreditChange = {
 *   set: 10_000,
 *   refill: { amount: 10_000, interval: "daily" },
 * };
 * const sameBalance: ApiKeyCreditChange = { refill: { amount: 10_000, interval: "daily" } };
 * ```
 */
export type ApiKeyCreditChange =
  | { readonly set: number }
  | { readonly add: number }
  | {
    /** The new refill rule; `null` ends the refills. */
    readonly refill: CreditRefill | null;
    /** The balance the new rule starts from (default: the balance kept). */
    readonly set?: number;
  };

/** The credits of a summary: the balance now and the refill rule (whose balance a key spends is not shown). */
export interface ApiKeySummaryCredits extends ApiKeyCreditBalance {
  /** Refill rule, when there is one. */
  refill?: CreditRefill;
}

/**
 * A key as `listSummaries` describes it: the record's fields without `hash`,
 * `hashScheme`, `pepperVersion`, `layout` and `rateLimitKeyId` (a rotated key's link to the
 * windows it counts on), and its `status`.
 */
export interface ApiKeySummary extends
  Omit<
    ApiKeyRecord,
    | "hash"
    | "hashScheme"
    | "pepperVersion"
    | "layout"
    | "allowedIpCidrs"
    | "credits"
    | "rateLimitKeyId"
  > {
  /** Canonical allowed CIDRs; empty means any address. */
  allowedIpCidrs: string[];
  /** The condition of the key when listed. */
  status: ApiKeyStatus;
  /** With a `limiter`, for a key with a balance of its own: its balance and next refill. */
  credits?: ApiKeySummaryCredits;
  /** With a `limiter`, for a key spending its tenant's shared pool: the pool's balance and next refill. */
  tenantCredits?: ApiKeySummaryCredits;
}

/** Result of a successful verification. */
export interface ApiKeyContext {
  /** Record id. */
  keyId: string;
  /** Owning tenant. */
  tenantId: string;
  /** Environment. */
  environment: Environment;
  /** Flattened scopes. */
  scopes: string[];
  /** Public prefix. */
  prefix: string;
  /** Allowed CIDRs, when the key has an allowlist. */
  allowedIpCidrs?: string[];
  /** The key's rate-limit policies, when it has some (compiled, frozen). */
  rateLimits?: readonly ApiKeyRateLimitPolicy[];
  /** Id of the key whose window counters this key counts on, when not its own (a rotated key's). */
  rateLimitKeyId?: string;
  /** With a `limiter`: each policy's answer to this request (for the `RateLimit` fields). */
  rateLimitResults?: readonly ApiKeyRateLimitResult[];
  /** The key's credits as stored, when it has some. */
  credits?: Readonly<ApiKeyCredits>;
  /**
   * With a `limiter`: the credit balance's answer to this request (the key's
   * own balance; the pool's for a key spending only its tenant's pool).
   */
  creditResult?: Readonly<CounterResult>;
  /** With `creditResult`: whose balance it answers, the key's own or the tenant's pool. */
  creditBalance?: ApiKeyCreditBalanceOwner;
  /** With a `limiter`, for a key spending its tenant's pool: the pool's answer to this request. */
  tenantCreditResult?: Readonly<CounterResult>;
}

/** Input of `ApiKeysService.create`. */
export interface CreateApiKeyInput {
  /** Owning tenant (non-empty). */
  tenantId: string;
  /** Display name (1 to 200 characters). */
  name: string;
  /** At least one scope. */
  scopes: Scope[];
  /** Environment; default `live`. */
  environment?: Environment;
  /** Expiry; omitted uses the TTL policy default, `null` means no expiry. */
  expiresAt?: Date | null;
  /** Who created the key. */
  createdBy?: string;
  /** Allowed client addresses or CIDR ranges. */
  allowedIpCidrs?: string[];
  /** Rate-limit policies (needs the storage capability `storesRateLimits`; a bad policy is a `TypeError`). */
  rateLimits?: ApiKeyRateLimitPolicy[];
  /**
   * Credits the key spends: its own balance, the tenant's pool, or both (needs
   * `storesCredits` and a `limiter`; a bad value is a `TypeError`).
   */
  credits?: ApiKeyCreditsInput;
  /**
   * Id of a key of the same tenant whose limits the new key shares, as a
   * rotated key shares its predecessor's: its rate-limit policies (unless
   * `rateLimits` is given), its window counters and its credit balance (when
   * it has one, `credits` cannot be given). A key minted by a limited key this way is
   * never less limited than it. Unknown or of another tenant:
   * `api_key_record_not_found`.
   */
  limitsOf?: string;
}

/** Result of `ApiKeysService.create`. `key` is shown once and never stored. */
export interface CreateApiKeyResult {
  /** New record id. */
  id: string;
  /** The raw key. */
  key: string;
}

/**
 * When the grace period of a rotation starts: at the rotation, or at the new
 * key's first successful verify (see `RotateApiKeyInput.graceStarts`).
 */
export type ApiKeyGraceStart = "rotation" | "first-use";

/**
 * Input of `ApiKeysService.rotate`; every field is optional, except that
 * `graceStarts: "first-use"` needs `maxWaitMs`.
 */
export interface RotateApiKeyInput {
  /** How long the old key keeps working, in ms (default 24 h). */
  gracePeriodMs?: number;
  /**
   * When the grace period starts (default `"rotation"`). With `"first-use"`,
   * the old key works until the new key's first successful verify plus
   * `gracePeriodMs`, and at the latest until rotation + `maxWaitMs` +
   * `gracePeriodMs` (never past its own expiry nor the new key's).
   */
  graceStarts?: ApiKeyGraceStart;
  /**
   * With `graceStarts: "first-use"` (required there, refused otherwise): how
   * long to wait for the new key's first use, in ms.
   */
  maxWaitMs?: number;
  /** Name of the new key (default: the old name). */
  name?: string;
  /** Creator of the new key. */
  createdBy?: string;
  /** Expiry of the new key; omitted uses the TTL policy default. */
  expiresAt?: Date | null;
  /** Allowlist of the new key (default: the old allowlist). */
  allowedIpCidrs?: string[];
  /** Rate-limit policies of the new key (default: the old key's). */
  rateLimits?: ApiKeyRateLimitPolicy[];
  /** Credits of the new key (default: it spends the old key's balance and pool, shared during the grace). */
  credits?: ApiKeyCreditsInput;
}

/** Result of `ApiKeysService.rotate`. */
export interface RotateApiKeyResult {
  /** New key id. */
  id: string;
  /** Raw new key. */
  key: string;
  /** Id of the rotated key. */
  replacedKeyId: string;
  /**
   * When the old key stops working; with `graceStarts: "first-use"`, the
   * latest it may (the new key's first use can bring it earlier).
   */
  graceExpiresAt: Date;
}

/** Options of `ApiKeysService.notifyExpiring`. */
export interface NotifyExpiringOptions {
  /**
   * How long before its expiry a key is announced, in ms: one or more
   * positive whole numbers (order and repeats do not matter).
   */
  thresholdsMs: number[];
  /** The run's time (default: the service's clock). */
  now?: Date;
}

/** What one `notifyExpiring` run emitted. */
export interface NotifyExpiringResult {
  /** `api_key.expiring` events this run emitted. */
  expiring: number;
  /** `api_key.rotation_completed` events this run emitted. */
  rotationsCompleted: number;
}

/** Expiry policy applied at create and rotate. */
export interface ApiKeyTtlPolicy {
  /** Lifetime used when `expiresAt` is omitted. */
  defaultExpiresInMs?: number;
  /** Longest lifetime accepted. */
  maxExpiresInMs?: number;
  /** Whether keys without expiry are accepted. */
  allowNeverExpires?: boolean;
}

/** A peppered hash and the pepper version that made it. */
export interface HashedSecret {
  /** The hash (base64url). */
  hash: string;
  /** Pepper version used. */
  pepperVersion: number;
}

/**
 * What `ApiKeyStorage.replaceHash` writes: a record's new hash, its scheme
 * and pepper version.
 */
export interface ApiKeyHashReplacement {
  /** The new hash. */
  hash: string;
  /** Its scheme. */
  hashScheme: ApiKeyHashScheme;
  /** Its pepper version. */
  pepperVersion: number;
}

/**
 * How many usable records (not revoked, not expired) one hash scheme and
 * pepper version has: a row of `ApiKeyStorage.countHashes` and of
 * `ApiKeysService.hashReport`.
 */
export interface ApiKeyHashCount {
  /** Hash scheme. */
  hashScheme: ApiKeyHashScheme;
  /** Pepper version (0 for `sha256`). */
  pepperVersion: number;
  /** Usable records on them. */
  count: number;
}

/**
 * What `ApiKeysService.hashReport` answers: the usable records per hash
 * scheme and pepper version, to know when a legacy scheme or an old pepper
 * version can be retired.
 */
export interface ApiKeyHashReport {
  /** When the records were counted (usable at this instant). */
  at: Date;
  /** The pepper version of new hashes. */
  currentPepperVersion: number;
  /** One row per scheme and version with usable records: current scheme first, versions ascending. */
  counts: ApiKeyHashCount[];
  /** Usable records in all. */
  usable: number;
  /**
   * Usable records on a legacy scheme or on a pepper version older than the
   * current one (upgraded on use; a later version is not counted).
   */
  toUpgrade: number;
}

/**
 * A record of another system to import (`ApiKeysService.importKeys`): the
 * fields of `ApiKeyRecord` as an export has them. Dates may be `Date`s or
 * ISO 8601 strings (as in JSON); scopes may be `resource:level` strings or
 * `Scope` objects. A rotated record's `rotatedAt` and `replacedByKeyId` are
 * imported together (both or neither); a record with a field not listed here
 * is refused (an error naming it).
 */
export interface ImportApiKeyRecord {
  /**
   * Record id: 1 to 200 characters, not only spaces, printable (default: a
   * new one from `idFactory`).
   */
  id?: string;
  /** Owning tenant (non-empty). */
  tenantId: string;
  /** Display name (1 to 200 characters). */
  name: string;
  /** Environment. */
  environment: Environment;
  /** Public prefix: of an accepted key layout (its length and alphabet), unique. */
  prefix: string;
  /** The stored hash (for the legacy schemes, hex; upper case is accepted and stored lower). */
  hash: string;
  /** Scheme of `hash` (required: a foreign hash labelled wrong would never verify). */
  hashScheme: ApiKeyHashScheme;
  /** Pepper version of `hash`: a configured one, or 0 for `sha256`. */
  pepperVersion: number;
  /**
   * Layout of the key: the name of one of the service's `legacyKeyLayouts`,
   * or `null` for the current layout. Omitted: the service's one legacy
   * layout when it has exactly one, the current layout when it has none.
   */
  layout?: string | null;
  /** Scopes: `resource:level` strings or `Scope` objects (at least one). */
  scopes: (string | Scope)[];
  /** Allowed client addresses or CIDR ranges. */
  allowedIpCidrs?: string[];
  /** Expiry (`null` or omitted: none; the TTL policy does not apply to imports). */
  expiresAt?: Date | string | null;
  /** When it was revoked. */
  revokedAt?: Date | string | null;
  /**
   * When it was rotated (`@nestarc/api-keys` 0.4 rows), with `replacedByKeyId`: both or neither
   * (its grace ends at `expiresAt`).
   */
  rotatedAt?: Date | string | null;
  /** The key that replaced it (import that key too), with `rotatedAt`. */
  replacedByKeyId?: string | null;
  /** Last use. */
  lastUsedAt?: Date | string | null;
  /** Creator. */
  createdBy?: string | null;
  /** Creation time (default: the import's). */
  createdAt?: Date | string;
}

/**
 * One record `importKeys` did not import: its position in the input, its
 * prefix when it has one, and why (naming the field; never a hash).
 */
export interface ImportApiKeyIssue {
  /** Position in the input, from 0. */
  index: number;
  /**
   * The record's prefix when it is a well-formed one (of an accepted layout),
   * else `null`: an export may hold a whole key in the field.
   */
  prefix: string | null;
  /** What is wrong. */
  message: string;
}

/** What `ApiKeysService.importKeys` answers. */
export interface ImportApiKeysResult {
  /** Records inserted. */
  imported: number;
  /**
   * Records already there (same prefix and hash, or the same id and tenant since upgraded on use),
   * with the same tenant, environment, scopes, allowlist and expiry.
   */
  skipped: number;
  /**
   * Records already there, not revoked, that the record says are revoked (the other system revoked
   * them since the first import): revoked here, as by `ApiKeysService.revoke`.
   */
  revoked: number;
  /**
   * Records whose prefix (or id) holds another key, or whose key is there with another tenant,
   * environment, scopes, allowlist or expiry (the message names the fields, never their values;
   * a revocation in the record still applies).
   */
  conflicts: ImportApiKeyIssue[];
  /** Records that are invalid or could not be written. */
  errors: ImportApiKeyIssue[];
  /**
   * All conflicts: `conflicts` keeps the first 1,000, so memory does not grow with a large
   * export's bad records (`ImportApiKeysOptions.onIssue` sees every one).
   */
  conflictCount: number;
  /** All errors: `errors` keeps the first 1,000. */
  errorCount: number;
}

/** Options of `ApiKeysService.importKeys` and `KeyImporter.importKeys`. */
export interface ImportApiKeysOptions {
  /**
   * Called with each conflict and error as it happens, before the next record is read (so a
   * reader of the input knows which line it was); awaited. What it throws stops the import.
   */
  onIssue?: (issue: ImportApiKeyIssue, kind: "conflict" | "error") => void | Promise<void>;
}

/** Options of `Sha256Hasher`. Version keys may be numeric strings. */
export interface HasherOptions {
  /** Pepper by version number. */
  peppers: Record<number, string>;
  /** Version used for new hashes (default: the highest). */
  currentVersion?: number;
}

/** Options of `list` and `listByTenant`. */
export interface ListApiKeysOptions {
  /** Include revoked keys (default false). */
  includeRevoked?: boolean;
}

/** Input of the storage `rotate` operation. */
export interface RotateApiKeyStorageInput {
  /** Key being rotated. */
  oldKeyId: string;
  /** Record of the new key. */
  newRecord: ApiKeyRecord;
  /** New `expiresAt` of the old key (the grace end). */
  oldExpiresAt: Date;
  /** Rotation time. */
  rotatedAt: Date;
  /**
   * The old key's name as the rotation read it, given when the new key takes
   * it over (`rotate` without `name`): a storage with `rotateChecksName`
   * rotates only while the old record still holds it (else `"not_rotatable"`),
   * so a rename landing meanwhile is not lost on the new key.
   */
  expectedName?: string;
}

/** Options of `createTestKey`. */
export interface CreateTestKeyOptions {
  /** Tenant (default `test-tenant`). */
  tenantId?: string;
  /** Name (default `test key`). */
  name?: string;
  /** Environment (default `test`). */
  environment?: Environment;
  /** Scopes (default `[{ resource: "test", level: "write" }]`). */
  scopes?: Scope[];
  /** Expiry. */
  expiresAt?: Date | null;
  /** Creator. */
  createdBy?: string;
  /** Allowlist. */
  allowedIpCidrs?: string[];
}
