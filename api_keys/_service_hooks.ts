/**
 * What the components outside `ApiKeysService` (the leaked-key handlers)
 * reach of each service without a public method: its `onEvent` dispatcher
 * (for `api_key.exposed`), its key layouts (and the bindings' log redacted
 * by them, `serviceLog`), the verify of a reported key, which records no
 * use, and the revoke that tells whether it won.
 *
 * @module
 */
import type { ApiKeyEvent } from "./events.ts";
import { type KeyLayouts, redactApiKeys } from "./key_format.ts";
import type { Dispatch, Redact } from "./_sinks.ts";
import type { AuditContext } from "./audit/types.ts";
import type { ApiKeyUsageBucket, ApiKeyUsageQuery } from "./metering/usage.ts";
import type {
  ApiKeyContext,
  ApiKeySummary,
  CreateApiKeyInput,
  CreateApiKeyResult,
  RotateApiKeyInput,
  RotateApiKeyResult,
} from "./types.ts";
import type { KeyLimits, Written } from "./_manage.ts";
import type { ListApiKeyPageOptions } from "./storage/types.ts";

/** The options of a rename (`ServiceHooks.renameForTenant`). */
export interface RenameOptions {
  /** Renames only while the key's name is this one (atomic: `replaceNameForTenant`). */
  expectedName?: string;
}

/** The hooks of one service. */
export interface ServiceHooks {
  /** The service's `onEvent` dispatcher, when it has one. */
  emitEvent: Dispatch<ApiKeyEvent> | undefined;
  /** The layouts the service accepts (which strings are its keys). */
  layouts: KeyLayouts;
  /** Hides its keys (every layout) in a log line (`Settings.redact`). */
  redact: Redact;
  /** Verifies a reported key, recording no use (the verify flow's `verifyReported`). */
  verifyReported: (rawKey: string) => Promise<ApiKeyContext>;
  /**
   * `revoke(keyId)`, calling `onRevoked` only when this call revoked the key,
   * before `api_key.revoked`, and `onLate` when its write is still pending at
   * the storage deadline (see `ManageFlow.revoke`).
   */
  revokeReported: (
    keyId: string,
    onRevoked: () => void,
    onLate?: (settled: Promise<void>) => void,
  ) => Promise<void>;
  /** The service's wall clock. */
  clock: () => Date;
  /** Whether the service's TTL policy allows a key living that long (`null`: without expiry). */
  allowsLifetime: (lifetimeMs: number | null) => boolean;
  /** The TTL policy's `defaultExpiresInMs`; `null` without one. */
  defaultLifetimeMs: number | null;
  /**
   * The storage's `renameForTenant` under its deadline, when it has the
   * capability; with the audit log, recorded as done by `context`'s actor.
   * With `options.expectedName` (needs `conditionalRename`), renames only
   * while the key's name is that one, in one step (`replaceNameForTenant`):
   * `false` when it is another (nothing written, nothing recorded). Resolves
   * `true` when it renamed.
   */
  renameForTenant:
    | ((
      tenantId: string,
      id: string,
      name: string,
      context?: AuditContext,
      options?: RenameOptions,
    ) => Promise<boolean>)
    | undefined;
  /** Whether `renameForTenant` takes `expectedName` (the storage has `replaceNameForTenant` too). */
  conditionalRename: boolean;
  /** Whether the service records usage (its `usage` option, on a storage that reads it back). */
  recordsUsage: boolean;
  /** Whether the service keeps the audit log (its `audit` option). */
  audits: boolean;
  /**
   * With the audit log, records a refused admin request (`key.escalation_refused`,
   * outcome `refused`): what was asked, on which key (null: a new one), and where it exceeded.
   */
  recordRefusal:
    | ((
      tenantId: string,
      context: AuditContext,
      key: { id: string; prefix: string } | null,
      asked: string,
      exceeds: unknown,
    ) => Promise<void>)
    | undefined;
  /** One page of a tenant's keys as summaries, with their predecessors (reads only). */
  listPage: (
    tenantId: string,
    options: ListApiKeyPageOptions,
  ) => Promise<{ summaries: ApiKeySummary[]; predecessors: Record<string, string> }>;
  /** `create`, with the summary of the record as written (no balance read). */
  createWithRecord: (
    input: CreateApiKeyInput,
    context?: AuditContext,
  ) => Promise<Written<CreateApiKeyResult>>;
  /** `rotateForTenant`, with the summary of the new record as written (no balance read). */
  rotateWithRecord: (
    tenantId: string,
    id: string,
    input?: RotateApiKeyInput,
    context?: AuditContext,
  ) => Promise<Written<RotateApiKeyResult>>;
  /** The summary of a tenant's key by id (`null`: unknown or another tenant's), one lookup. */
  summaryOf: (tenantId: string, id: string) => Promise<ApiKeySummary | null>;
  /** `summaryOf` of each of `ids` (distinct, at most 100), in order: one storage read when it can. */
  summariesOf: (tenantId: string, ids: readonly string[]) => Promise<(ApiKeySummary | null)[]>;
  /** The usage of each of `keyIds` of the tenant (a list per key, in order): one storage read when it can. */
  usageOfKeys: (
    tenantId: string,
    keyIds: readonly string[],
    query: Omit<ApiKeyUsageQuery, "keyId">,
  ) => Promise<ApiKeyUsageBucket[][]>;
  /** The limits of each of a tenant's keys `ids` (distinct, at most 100), in order: one storage read. */
  keyLimitsOf: (tenantId: string, ids: readonly string[]) => Promise<(KeyLimits | null)[]>;
  /** The id of the tenant's key that key `id` replaced, or `null` (reads only). */
  predecessorOf: (tenantId: string, id: string) => Promise<string | null>;
}

const hooks = new WeakMap<object, ServiceHooks>();

/** Records the hooks of `service` (called by its constructor). */
export function attachServiceHooks(service: object, serviceHooks: ServiceHooks): void {
  hooks.set(service, serviceHooks);
}

/** The hooks of `service`, if it is an `ApiKeysService`. */
export function serviceHooks(service: object): ServiceHooks | undefined {
  return hooks.get(service);
}

/**
 * The redaction of `service`'s key layouts (its `legacyKeyLayouts` too;
 * `redactApiKeys`, the current layout, for another object).
 */
export function serviceRedact(service: object): Redact {
  return serviceHooks(service)?.redact ?? redactApiKeys;
}

/**
 * `write` behind `serviceRedact(service)`: the log of the bindings (the Fetch
 * authorizer's `log`, the guard's `Logger`).
 */
export function serviceLog(service: object, write: (line: string) => void): (line: string) => void {
  const redact = serviceRedact(service);
  return (line) => write(redact(line));
}
