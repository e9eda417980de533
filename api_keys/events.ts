/**
 * Events and the verification metric of the API-key component, delivered in
 * process to the `onEvent` and `onMetric` sinks. None carries key material.
 *
 * @module
 */
import type { AuditCheckpoint } from "./audit/types.ts";
import type { ApiKeyErrorCode } from "./errors.ts";
import type {
  ApiKeyCreditBalanceOwner,
  ApiKeyGraceStart,
  ApiKeyHashScheme,
  ApiKeyRecord,
  ApiKeyVerificationOutcome,
  Environment,
} from "./types.ts";

/** Emitted by `create`. */
export interface ApiKeyCreatedEvent {
  /** Event type. */
  type: "api_key.created";
  /** When it happened. */
  at: Date;
  /** New key id. */
  keyId: string;
  /** Owning tenant. */
  tenantId: string;
  /** Public prefix. */
  prefix: string;
  /** Environment. */
  environment: Environment;
  /** Flattened scopes. */
  scopes: string[];
  /** Creator, or null. */
  createdBy: string | null;
}

/** The `api_key.created` event of a stored `record` (by `create` and by `importKeys`). */
export function createdEvent(record: ApiKeyRecord, at: Date): ApiKeyCreatedEvent {
  return {
    type: "api_key.created",
    at,
    keyId: record.id,
    tenantId: record.tenantId,
    prefix: record.prefix,
    environment: record.environment,
    scopes: [...record.scopes],
    createdBy: record.createdBy,
  };
}

/** Emitted by `revoke` (once per key; a repeated revoke emits nothing). */
export interface ApiKeyRevokedEvent {
  /** Event type. */
  type: "api_key.revoked";
  /** When it happened. */
  at: Date;
  /** Revoked key id. */
  keyId: string;
  /** Owning tenant. */
  tenantId: string;
  /** Public prefix. */
  prefix: string;
  /** Environment. */
  environment: Environment;
}

/** Emitted by `rotate`. */
export interface ApiKeyRotatedEvent {
  /** Event type. */
  type: "api_key.rotated";
  /** When it happened. */
  at: Date;
  /** Owning tenant. */
  tenantId: string;
  /** Id of the rotated key. */
  oldKeyId: string;
  /** Prefix of the rotated key. */
  oldPrefix: string;
  /** Id of the new key. */
  newKeyId: string;
  /** Prefix of the new key. */
  newPrefix: string;
  /** Environment. */
  environment: Environment;
  /** Flattened scopes of the new key. */
  scopes: string[];
  /**
   * When the old key stops working; with `graceStarts: "first-use"`, the
   * latest it may (`api_key.rotation_completed` says when it did).
   */
  graceExpiresAt: Date;
  /** When the grace period starts: at the rotation, or at the new key's first use. */
  graceStarts: ApiKeyGraceStart;
  /** Creator of the new key, or null. */
  createdBy: string | null;
}

/**
 * Emitted by `notifyExpiring` at most once per key and threshold: the usable key
 * expires within `thresholdMs` of the run (a key first seen inside several
 * thresholds gets the smallest only).
 */
export interface ApiKeyExpiringEvent {
  /** Event type. */
  type: "api_key.expiring";
  /** When the run saw it. */
  at: Date;
  /** Key id. */
  keyId: string;
  /** Owning tenant. */
  tenantId: string;
  /** Public prefix. */
  prefix: string;
  /** Environment. */
  environment: Environment;
  /** When the key stops working. */
  expiresAt: Date;
  /** The threshold crossed, in ms (one of `notifyExpiring`'s `thresholdsMs`). */
  thresholdMs: number;
}

/**
 * Emitted by `notifyExpiring` once per rotation, after its old key stopped
 * being accepted at the end of its grace (a rotation whose old key was
 * revoked ends with `api_key.revoked` instead).
 */
export interface ApiKeyRotationCompletedEvent {
  /** Event type. */
  type: "api_key.rotation_completed";
  /** When the run saw it. */
  at: Date;
  /** Owning tenant. */
  tenantId: string;
  /** Id of the rotated key. */
  oldKeyId: string;
  /** Prefix of the rotated key. */
  oldPrefix: string;
  /** Id of the new key. */
  newKeyId: string;
  /** Environment. */
  environment: Environment;
  /** When the key was rotated. */
  rotatedAt: Date;
  /** When the old key stopped being accepted (its final `expiresAt`). */
  endedAt: Date;
}

/**
 * Emitted for every failed verification or authorization, except a storage
 * failure and a limit's refusal (see `ApiKeyAuthorizationDeniedEvent`). `keyId`, `tenantId` and `environment` are present once the
 * presented secret matched a record (revoked, expired, IP, environment, scope).
 */
export interface ApiKeyAuthFailedEvent {
  /** Event type. */
  type: "api_key.auth_failed";
  /** When it happened. */
  at: Date;
  /** Public prefix of the presented key, or null when it could not be parsed. */
  prefix: string | null;
  /** Failure code. */
  code: ApiKeyErrorCode;
  /** Key id, when known. */
  keyId?: string;
  /** Tenant, when known. */
  tenantId?: string;
  /** Environment, when known. */
  environment?: Environment;
}

/**
 * Emitted once per refused `authorize` or `authorizeRequest` (any code, from
 * a missing key to a rate limit): beside `api_key.auth_failed`, except for a
 * limit's refusal (`api_key_rate_limited`, `api_key_usage_exceeded`,
 * `api_key_rate_limit_unavailable`), which is no authentication failure. It
 * carries the code only (seed 0.4), so a sink may forward it anywhere.
 */
export interface ApiKeyAuthorizationDeniedEvent {
  /** Event type. */
  type: "api_key.authorization_denied";
  /** When it happened. */
  at: Date;
  /** Failure code. */
  code: ApiKeyErrorCode;
}

/**
 * Emitted once per successful `verify` or `authorize`, only with
 * `emitUsageEvents: true`.
 */
export interface ApiKeyUsedEvent {
  /** Event type. */
  type: "api_key.used";
  /** When it happened. */
  at: Date;
  /** Key id. */
  keyId: string;
  /** Owning tenant. */
  tenantId: string;
  /** Public prefix. */
  prefix: string;
  /** Environment. */
  environment: Environment;
  /** Flattened scopes. */
  scopes: string[];
}

/**
 * Emitted when upgrading a record's hash on use failed: re-hashing with the
 * current scheme and pepper, or the storage's `replaceHash`, threw or timed
 * out. The verification it followed had already succeeded; the record keeps
 * its old hash and is not tried again by this instance. Not emitted when the
 * hash changed underneath (the record is left alone).
 */
export interface ApiKeyRehashFailedEvent {
  /** Event type. */
  type: "api_key.rehash_failed";
  /** When it happened. */
  at: Date;
  /** Key id. */
  keyId: string;
  /** Owning tenant. */
  tenantId: string;
  /** Public prefix. */
  prefix: string;
  /** Environment. */
  environment: Environment;
  /** The scheme the record is still on. */
  hashScheme: ApiKeyHashScheme;
  /** The pepper version the record is still on. */
  pepperVersion: number;
}

/**
 * Emitted by the one report that revoked a key (of concurrent reports of it,
 * only the winner), right before the usual `api_key.revoked`. Carries no key
 * material.
 */
export interface ApiKeyExposedEvent {
  /** Event type. */
  type: "api_key.exposed";
  /** When it happened. */
  at: Date;
  /** Exposed key id. */
  keyId: string;
  /** Owning tenant. */
  tenantId: string;
  /** Public prefix. */
  prefix: string;
  /** Environment. */
  environment: Environment;
  /**
   * Where it was found: GitHub's `source` (e.g. `content`, `commit`, `npm`) or
   * `public_report` for the public revocation endpoint.
   */
  source: string;
  /** Public URL of the finding (GitHub's `url`), or null when none was given. */
  url: string | null;
}

/**
 * Emitted by the one request whose spend took a balance (the key's own, or
 * its tenant's shared pool: `creditBalance`) from above `threshold` to at most
 * it (one of `creditThresholds`): once per threshold and refill period across
 * a fleet, and for a pool once for all the tenant's keys.
 */
export interface ApiKeyCreditsLowEvent {
  /** Event type. */
  type: "api_key.credits_low";
  /** When it happened. */
  at: Date;
  /** Key id (the key that spent). */
  keyId: string;
  /** Owning tenant. */
  tenantId: string;
  /** Whose balance: the key's own or the tenant's shared pool. */
  creditBalance: ApiKeyCreditBalanceOwner;
  /** Credits left after the spend. */
  remaining: number;
  /** The threshold crossed. */
  threshold: number;
  /** When the balance next refills, or null without a refill. */
  nextRefillAt: Date | null;
}

/**
 * Emitted by the one request whose spend took a balance (the key's own, or its
 * tenant's shared pool: `creditBalance`) to 0: once per refill period.
 */
export interface ApiKeyCreditsExhaustedEvent {
  /** Event type. */
  type: "api_key.credits_exhausted";
  /** When it happened. */
  at: Date;
  /** Key id (the key that spent). */
  keyId: string;
  /** Owning tenant. */
  tenantId: string;
  /** Whose balance: the key's own or the tenant's shared pool. */
  creditBalance: ApiKeyCreditBalanceOwner;
  /** Always 0. */
  remaining: number;
  /** When the balance next refills, or null without a refill. */
  nextRefillAt: Date | null;
}

/**
 * Emitted with the `audit` option every `checkpointEvery` records of a tenant
 * (or `checkpointIntervalMs`): its chain's head signed with the checkpoint
 * key. Keep it outside the database to detect a truncated or rewritten chain.
 */
export interface ApiKeyAuditCheckpointEvent {
  /** Event type. */
  type: "api_key.audit_checkpoint";
  /** When it was signed. */
  at: Date;
  /** The signed head. */
  checkpoint: AuditCheckpoint;
}

/** Every event of the API-key component, discriminated by `type`. */
export type ApiKeyEvent =
  | ApiKeyCreatedEvent
  | ApiKeyRevokedEvent
  | ApiKeyRotatedEvent
  | ApiKeyAuthFailedEvent
  | ApiKeyAuthorizationDeniedEvent
  | ApiKeyUsedEvent
  | ApiKeyExposedEvent
  | ApiKeyRehashFailedEvent
  | ApiKeyExpiringEvent
  | ApiKeyRotationCompletedEvent
  | ApiKeyCreditsLowEvent
  | ApiKeyCreditsExhaustedEvent
  | ApiKeyAuditCheckpointEvent;

/** One per verification: its outcome and duration (from `monotonicClock`). */
export interface ApiKeyVerificationMetric {
  /** Metric type. */
  type: "api_key.verification";
  /** Outcome. */
  outcome: ApiKeyVerificationOutcome;
  /** Duration in milliseconds. */
  durationMs: number;
  /** Environment, when known (the presented key's environment once parsed). */
  environment?: Environment;
}

/**
 * Outcome of `api_key.authorization`: `success`; `missing` (no key);
 * `credential_rejected` (a key that did not verify: malformed, invalid,
 * revoked or expired); the request check that refused a key whose secret was
 * proven (`rate_limited` and `usage_exceeded` with a `limiter`); `error` (a
 * storage or limiter failure).
 */
export type ApiKeyAuthorizationOutcome =
  | "success"
  | "missing"
  | "credential_rejected"
  | "ip_denied"
  | "environment_denied"
  | "scope_denied"
  | "rate_limited"
  | "usage_exceeded"
  | "error";

/**
 * One per `authorize` or `authorizeRequest`, to `onAuthorizationMetric`.
 * Low-cardinality: no key, tenant or address.
 */
export interface ApiKeyAuthorizationMetric {
  /** Metric type. */
  type: "api_key.authorization";
  /** How the authorization ended. */
  outcome: ApiKeyAuthorizationOutcome;
  /** Duration of the authorization in milliseconds (from `monotonicClock`). */
  durationMs: number;
  /** Environment of the key, when known (the presented key's once parsed). */
  environment?: Environment;
}

/**
 * One when `create` or `rotate` gives up on prefix collisions (it then
 * throws `ApiKeyPrefixCollisionError`), to `onOperationMetric`.
 */
export interface ApiKeyOperationMetric {
  /** Metric type. */
  type: "api_key.operation";
  /** The operation. */
  operation: "create" | "rotate";
  /** Always `prefix_collision_exhausted`. */
  outcome: "prefix_collision_exhausted";
  /** Attempts made (3). */
  attempts: number;
}
