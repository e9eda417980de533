/**
 * `ApiKeysService`: create, verify, authorize, rotate, revoke and list API
 * keys. Framework-neutral; the Nest module is a thin provider around it.
 *
 * @module
 */
import type { ExpiryJob } from "./_expiry.ts";
import type { CreditBook } from "./metering/_credits.ts";
import { checkPersistInterval } from "./_options.ts";
import type { RateLimiter } from "../rate_limits/mod.ts";
import type { ApiKeyHeaderReader } from "./extract_api_key.ts";
import { checkReady, hashReport } from "./verify/_legacy.ts";
import type { ManageFlow } from "./_manage.ts";
import type { ApiKeysServiceOptions } from "./service_options.ts";
import { registerTaps } from "../telemetry/_taps.ts";
import { compileSettings, type Settings } from "./_settings.ts";
import type {
  ApiKeyContext,
  ApiKeyCreditBalance,
  ApiKeyCreditChange,
  ApiKeyHashReport,
  ApiKeyRecord,
  ApiKeySummary,
  ApiKeySummaryCredits,
  AuthorizeOptions,
  CreateApiKeyInput,
  CreateApiKeyResult,
  ImportApiKeyRecord,
  ImportApiKeysOptions,
  ImportApiKeysResult,
  ListApiKeysOptions,
  NotifyExpiringOptions,
  NotifyExpiringResult,
  RotateApiKeyInput,
  RotateApiKeyResult,
} from "./types.ts";
import type { VerifyFlow } from "./verify/_verify.ts";
import { attachServiceHooks, type ServiceHooks } from "./_service_hooks.ts";
import { loadSha256 } from "./hasher.ts";
import { ApiKeyStorageError } from "./errors.ts";
import type { ApiKeyUsageBucket, ApiKeyUsageQuery } from "./metering/usage.ts";
import type { AuditLog } from "./audit/_log.ts";
import type {
  AuditCheckpoint,
  AuditContext,
  AuditLogPage,
  AuditLogQuery,
  AuditVerification,
  AuditVerifyRange,
} from "./audit/types.ts";

/**
 * A flow whose code is imported when a service is built, not when the service's module is (an
 * app importing `./api-keys/nest` pays for it at start): `use` waits for the load only until it
 * is done (a failed load is tried again), then calls the flow at once. Each flow is built after
 * `Settings.loaded()` (the usage recorder, feed follower and audit log it may use).
 */
class LoadedFlow<T> {
  #flow: T | undefined;
  #loading: Promise<T> | undefined;

  constructor(private readonly load: () => Promise<T>) {
    this.#start().catch(() => {}); // reported by the first `use`
  }

  #start(): Promise<T> {
    return this.#loading ??= this.load().then((flow) => this.#flow = flow, (error) => {
      this.#loading = undefined;
      throw error;
    });
  }

  use<R>(call: (flow: T) => Promise<R>): Promise<R> {
    return this.#flow !== undefined ? call(this.#flow) : this.#start().then(call);
  }

  /** The flow once loaded (a hot path calls it without the closure `use` takes). */
  get loaded(): T | undefined {
    return this.#flow;
  }
}

/**
 * The API-key service. Contexts it returns are frozen.
 *
 * @example
 * ```ts
 * import { ApiKeysService } from "./service.ts";
 * import { InMemoryApiKeyStorage } from "./storage/in_memory.ts";
 * const service = new ApiKeysService({
 *   peppers: { 1: "a-pepper-of-at-least-thirty-two-bytes" },
 *   storage: new InMemoryApiKeyStorage(),
 * });
 * const { key } = await service.create({
 *   tenantId: "t1", name: "ci", scopes: [{ resource: "orders", level: "read" }],
 * });
 * const context = await service.authorize(key, { requiredScope: { resource: "orders", level: "read" } });
 * context.tenantId; // "t1"
 * ```
 */
export class ApiKeysService {
  readonly #settings: Settings;
  readonly #verify: LoadedFlow<VerifyFlow>;
  readonly #manage: LoadedFlow<ManageFlow>;
  readonly #expiry: LoadedFlow<ExpiryJob>;
  readonly #credits: LoadedFlow<CreditBook>;
  readonly #limiter: RateLimiter | undefined;

  /**
   * Throws a `TypeError` naming a bad option. Missing storage capabilities,
   * and a `"nestarc-v0"` layout without `namespace`, are logged once.
   */
  constructor(options: ApiKeysServiceOptions) {
    const settings = compileSettings(options);
    if (settings.storage.notice !== undefined) console.info(settings.storage.notice);
    if (settings.warning !== undefined) console.warn(settings.warning);
    this.#settings = settings;
    registerTaps(this, settings.taps);
    this.#limiter = options.limiter;
    this.#verify = new LoadedFlow(async () => {
      const [{ VerifyFlow }] = await Promise.all([
        import("./verify/_verify.ts"),
        settings.loaded(),
      ]);
      return new VerifyFlow(settings);
    });
    checkPersistInterval(options.persistIntervalMs, options.limiter !== undefined, PREFIX);
    const credits = this.#credits = new LoadedFlow(async () => {
      const [{ CreditBook }] = await Promise.all([
        import("./metering/_credits.ts"),
        settings.loaded(),
      ]);
      return new CreditBook(
        settings.storage,
        options.limiter,
        options.persistIntervalMs,
        settings.clock,
        PREFIX,
        (prefix) => {
          settings.cache?.invalidate(prefix);
          settings.fleet?.wrote("updated", prefix);
        },
        settings.redact,
      );
    });
    this.#manage = new LoadedFlow(async () => {
      const [{ ManageFlow }, book] = await Promise.all([
        import("./_manage.ts"),
        credits.use((book) => Promise.resolve(book)),
      ]);
      return new ManageFlow(settings, book);
    });
    attachServiceHooks(this, {
      emitEvent: settings.emitEvent,
      layouts: settings.layouts,
      redact: settings.redact,
      verifyReported: (rawKey) => this.#verify.use((flow) => flow.verifyReported(rawKey)),
      revokeReported: (keyId, onRevoked, onLate) =>
        this.#manage.use((flow) => flow.revoke(keyId, onRevoked, { actor: "leak-report" }, onLate)),
      clock: settings.clock,
      allowsLifetime: settings.allowsLifetime,
      defaultLifetimeMs: settings.defaultLifetimeMs,
      renameForTenant: auditedRename(settings),
      conditionalRename: settings.storage.renameForTenant !== undefined &&
        settings.storage.replaceNameForTenant !== undefined,
      recordsUsage: settings.recordsUsage,
      audits: settings.audits,
      recordRefusal: auditedRefusal(settings),
      listPage: (tenantId, options) =>
        this.#manage.use((flow) => flow.listSummaryPage(tenantId, options)),
      createWithRecord: (input, context) =>
        this.#manage.use((flow) => flow.createWithRecord(input, context)),
      rotateWithRecord: (tenantId, id, input, context) =>
        this.#manage.use((flow) => flow.rotateWithRecord(tenantId, id, input, context)),
      summaryOf: (tenantId, id) => this.#manage.use((flow) => flow.summaryOf(tenantId, id)),
      summariesOf: (tenantId, ids) => this.#manage.use((flow) => flow.summariesOf(tenantId, ids)),
      keyLimitsOf: (tenantId, ids) => this.#manage.use((flow) => flow.keyLimitsOf(tenantId, ids)),
      usageOfKeys: async (tenantId, keyIds, query) => {
        const { readUsageOfKeys } = await import("./metering/_usage.ts");
        return readUsageOfKeys(settings.storage.usage, tenantId, keyIds, query);
      },
      predecessorOf: (tenantId, id) => this.#manage.use((flow) => flow.predecessorOf(tenantId, id)),
    });
    this.#expiry = new LoadedFlow(async () => {
      const [{ ExpiryJob }] = await Promise.all([import("./_expiry.ts"), settings.loaded()]);
      return new ExpiryJob(settings);
    });
  }

  /** Namespace of the keys this service issues and accepts. */
  get namespace(): string {
    return this.#settings.namespace;
  }

  /**
   * Await before serving (the Nest module does). Awaits the storage's `ready()`
   * (a capability): a misconfigured storage rejects with its `TypeError` (for
   * `PrismaApiKeyStorage`, a session whose time zone is not UTC); a storage
   * down logs one line and resolves. With `retiredPepperVersions`,
   * rejects with an `Error` naming the counts while usable records remain on
   * a retired pepper version or on `sha256`, and with `ApiKeyStorageError`
   * when the storage is down. With a `limiter`, awaits its `ready()`: a
   * misconfigured store rejects with its `TypeError`; a store merely down
   * logs one line and resolves (its `onStoreError` applies meanwhile); and the
   * SHA-256 of counter subjects too long to keep readable (loaded on first need).
   * Also awaits the code of the options `usage`, `feed` and `audit` (loaded
   * when the service is built; a failed load rejects, and is tried again).
   */
  async ready(): Promise<void> {
    const limiter = this.#limiter;
    await Promise.all([
      this.#settings.storage.ready().then((line) => line === undefined || console.warn(line)),
      checkReady(this.#settings),
      limiter?.ready(),
      limiter && loadSha256(),
      this.#settings.loaded(),
    ]);
  }

  /**
   * Usable records per hash scheme and pepper version; at `toUpgrade` 0, old
   * schemes and peppers can be retired. Rejects with `ApiKeyStorageError`
   * without the storage capability `countHashes` or when the storage fails.
   */
  hashReport(): Promise<ApiKeyHashReport> {
    return hashReport(this.#settings);
  }

  /**
   * Imports another system's records (any iterable or async iterable), one at
   * a time, each validated; a legacy scheme needs `legacyKeyLayouts`. Keyed by
   * prefix, so a re-run changes only what the other system changed since: a
   * free prefix is inserted (emitting `api_key.created`); the same key is
   * skipped, or revoked as by `revoke` when the record is revoked and the key
   * is not, and a conflict naming the fields when its tenant, environment,
   * scopes, allowlist or expiry differ; another key there is a conflict.
   * Failures are reported per record (each to `options.onIssue` as it
   * happens; the result keeps the first 1,000 and counts all); the TTL policy
   * does not apply. Its code loads on the first call (apps that never import
   * pay nothing).
   */
  async importKeys(
    records: Iterable<ImportApiKeyRecord> | AsyncIterable<ImportApiKeyRecord>,
    context?: AuditContext,
    options?: ImportApiKeysOptions,
  ): Promise<ImportApiKeysResult> {
    const [{ importKeys }] = await Promise.all([import("./_import.ts"), this.#settings.loaded()]);
    return importKeys(
      this.#settings,
      records,
      context,
      (id, revokeContext) => this.#manage.use((flow) => flow.revoke(id, undefined, revokeContext)),
      options,
    );
  }

  /**
   * Creates a key under the TTL policy; emits `api_key.created`. Throws
   * `ApiKeyValidationError` naming the field (nothing written), and
   * `ApiKeyPrefixCollisionError` after 3 taken prefixes (so does `rotate`).
   */
  create(input: CreateApiKeyInput, context?: AuditContext): Promise<CreateApiKeyResult> {
    return this.#manage.use((flow) => flow.create(input, context));
  }

  /**
   * Verifies a raw key: parse (malformed) → find by prefix (unknown: invalid
   * after a dummy hash) → secret (invalid) → revoked → expired. Failures call
   * `onAuthFailed` and emit `api_key.auth_failed`; a storage failure rejects
   * with `ApiKeyStorageError`.
   */
  verify(rawKey: string): Promise<ApiKeyContext> {
    const flow = this.#verify.loaded;
    return flow !== undefined ? flow.verify(rawKey) : this.#verify.use((f) => f.verify(rawKey));
  }

  /**
   * `verify`, then the IP allowlist, environment and scope, in that order; a
   * missing key is `api_key_missing`, a bad `requiredScope` level a
   * `TypeError`. Emits `api_key.used` only when every check passes.
   */
  authorize(
    rawKey: string | undefined,
    options?: AuthorizeOptions,
  ): Promise<ApiKeyContext> {
    const flow = this.#verify.loaded;
    return flow !== undefined
      ? flow.authorize(rawKey, options)
      : this.#verify.use((f) => f.authorize(rawKey, options));
  }

  /**
   * `authorize` with the key taken from headers by the rules of
   * `extractApiKey`: the one call framework bindings make. A header failure
   * is `api_key_malformed` (its `reason` naming the rule), reported like a key
   * that does not parse.
   */
  authorizeRequest(
    readHeader: ApiKeyHeaderReader,
    options?: AuthorizeOptions,
  ): Promise<ApiKeyContext> {
    const flow = this.#verify.loaded;
    return flow !== undefined
      ? flow.authorizeRequest(readHeader, options)
      : this.#verify.use((f) => f.authorizeRequest(readHeader, options));
  }

  /**
   * Issues a new key inheriting tenant, environment, scopes, allowlist and
   * name (unless overridden); the old key works until `graceExpiresAt` (the
   * earliest of now + `gracePeriodMs`, its own expiry and the new key's). Emits
   * `api_key.rotated`. Unknown id: `api_key_record_not_found`; revoked,
   * expired or rotated: `api_key_not_rotatable`. With `graceStarts:
   * "first-use"` (see `RotateApiKeyInput`) the new key's first verify lowers
   * the old key's expiry; a storage without rotation waits throws a
   * `TypeError` before writing.
   */
  rotate(
    id: string,
    input?: RotateApiKeyInput,
    context?: AuditContext,
  ): Promise<RotateApiKeyResult> {
    return this.#manage.use((flow) => flow.rotate(id, input, context));
  }

  /**
   * Revokes a key at once, ending any grace; emits `api_key.revoked` (not
   * again for a revoked key). Unknown id: `api_key_record_not_found`.
   */
  revoke(id: string, context?: AuditContext): Promise<void> {
    return this.#manage.use((flow) => flow.revoke(id, undefined, context));
  }

  /**
   * A tenant's keys newest first (`createdAt` descending, then `id`); revoked
   * ones only with `includeRevoked`.
   */
  list(tenantId: string, options?: ListApiKeysOptions): Promise<ApiKeyRecord[]> {
    return this.#manage.use((flow) => flow.list(tenantId, options));
  }

  /** `rotate` for `tenantId`: another tenant's key is `api_key_record_not_found`, unchanged. */
  rotateForTenant(
    tenantId: string,
    id: string,
    input?: RotateApiKeyInput,
    context?: AuditContext,
  ): Promise<RotateApiKeyResult> {
    return this.#manage.use((flow) => flow.rotateForTenant(tenantId, id, input, context));
  }

  /** `revoke` for `tenantId`: another tenant's key is `api_key_record_not_found`, unchanged. */
  revokeForTenant(tenantId: string, id: string, context?: AuditContext): Promise<void> {
    return this.#manage.use((flow) => flow.revokeForTenant(tenantId, id, context));
  }

  /**
   * Sets (`{ set: n }`) or adds to (`{ add: n }`, negative subtracts; clamped
   * to 0) the credit balance of key `id` of `tenantId` (its own balance), or
   * with `id` `null` the tenant's shared pool, atomically with the spends in
   * the limiter's store, and writes the result back to the records spending
   * it (a rotated key and its successor share one; every key of the tenant
   * shares the pool); resolves the balance. `{ set, refill: rule | null }`
   * sets the balance and changes its refill rule in those records, in one
   * store step; `{ refill }` alone keeps the balance (the old rule's refill
   * due taken), in one store step too (a store with `anchorsCredits`, else a
   * `TypeError`): the new rule's first refill is its next boundary after the
   * change (docs/rate-limits.md, "Changing a refill rule"). Another tenant's key is
   * `api_key_record_not_found`, unchanged; a key without a balance of its own
   * (or a tenant without a pool) is `ApiKeyValidationError` on `credits`; a
   * bad change or a service without a `limiter` is a `TypeError`. With the
   * `audit` option, `context` is checked before the change (a refused one is
   * a `TypeError` and changes nothing), and the record is appended once the
   * change is applied: the credit store is not the audit storage, so an
   * append that fails then rejects with `ApiKeyAuditNotRecordedError`,
   * whose `balance` is the balance the change left (it happened: do not
   * retry it). A write to the records that fails once the store applied the
   * change resolves all the same (audited, logged): the next write-back pass
   * (`persistIntervalMs`, `close()`) writes it. Each change reads the record
   * (or the pool) and its rule in turn after those queued before it.
   */
  updateCredits(
    tenantId: string,
    id: string | null,
    change: ApiKeyCreditChange,
    context?: AuditContext,
  ): Promise<ApiKeyCreditBalance> {
    return this.#manage.use((flow) => flow.updateCredits(tenantId, id, change, context));
  }

  /**
   * The balance of `tenantId`'s shared credit pool now, with its refill rule
   * (read from the limiter's store without writing; the last written-back
   * balance when the store fails); `null` when no key of the tenant spends a
   * pool or without a `limiter`.
   */
  tenantCredits(tenantId: string): Promise<ApiKeySummaryCredits | null> {
    return this.#manage.use((flow) => flow.tenantCredits(tenantId));
  }

  /**
   * `list` as `ApiKeySummary`s: no hash fields, each key's `status` now and,
   * with a `limiter`, its credits (read from the limiter's store; the last
   * written-back balance when the store fails).
   */
  listSummaries(tenantId: string, options?: ListApiKeysOptions): Promise<ApiKeySummary[]> {
    return this.#manage.use((flow) => flow.listSummaries(tenantId, options));
  }

  /**
   * One pass of the expiry notices, for any scheduler (the Nest module's
   * `expiryNotices` runs it). Emits `api_key.expiring` at most once per usable
   * key and threshold, across instances (a key inside several thresholds gets
   * only the smallest; a larger never follows a smaller), and
   * `api_key.rotation_completed` at most once per ended grace: a claim that
   * outlives `storageTimeoutMs` (stored all the same) or a crash between the
   * claim and the emit loses that event. Bad options reject
   * with `api_key_invalid_input`; a storage without `listExpiring` and
   * `claimExpiryNotice` with a `TypeError`.
   */
  notifyExpiring(options: NotifyExpiringOptions): Promise<NotifyExpiringResult> {
    return this.#expiry.use((job) => job.run(options));
  }

  /**
   * The stored usage of `tenantId`'s keys (of `keyId` only, when given;
   * another tenant's key reads as none) from the bucket of `from` to `to`,
   * per hour (span at most 31 days and 1 hour) or UTC day (at most 366): the buckets
   * with counts, ascending, summed over the keys. Counts still in memory
   * (up to one `flushIntervalMs` per instance) are not included. A bad
   * query rejects with `api_key_invalid_input`; a storage without
   * `readUsage` with a `TypeError`.
   */
  async usage(tenantId: string, query: ApiKeyUsageQuery): Promise<ApiKeyUsageBucket[]> {
    const { readUsage } = await import("./metering/_usage.ts");
    return readUsage(this.#settings.storage.usage, tenantId, query);
  }

  /**
   * A page of `tenantId`'s audit log, newest first (`query.cursor`: the
   * previous page's `nextCursor`; `limit` 1 to 100, default 25), filtered by
   * time, key, actor and action. A bad query rejects with
   * `ApiKeyValidationError` naming the field; without the `audit` option, a `TypeError`.
   */
  auditLog(tenantId: string, query?: AuditLogQuery): Promise<AuditLogPage> {
    return this.#audit().then((log) => log.page(tenantId, query));
  }

  /**
   * Verifies `tenantId`'s audit chain (all of it, or `range`): each hash
   * recomputed, each link and sequence number checked from the anchor to the
   * head read when it starts (its record with its hash; records appended
   * meanwhile are left out) and to `range.checkpoint` (from its record when
   * it lies before `range.fromSeq`); a `range.toSeq` before the head must be
   * reached, and the record after it must link to it. Answers the first record found edited, deleted, inserted (also
   * past the head without having advanced it) or reordered, or a truncated
   * tail; a checkpoint not signed with the key, or whose `seq` or `hash` is
   * not of the type signed, is `checkpoint_invalid`. With a checkpoint, `ok`
   * says `checkpoint: "checked"`, or `"before_prune"` when a prune passed it:
   * it proved nothing (treat what it covered as unverified). A `toSeq`
   * before the checkpoint's `seq` is a `TypeError`.
   */
  verifyAuditLog(tenantId: string, range?: AuditVerifyRange): Promise<AuditVerification> {
    return this.#audit().then((log) => log.verify(tenantId, range));
  }

  /**
   * `tenantId`'s audit log from `fromSeq` to the head read at its start as
   * JSON Lines (one string per line, read a page at a time: never the whole
   * range in memory), with signed checkpoints; schema in docs/operations.md,
   * "The audit log". Verified as it streams: at the first record that does
   * not verify, it throws an `Error` named `AuditChainError` (the export is
   * then incomplete), with no checkpoint signed at or past that record; the
   * check starts at the last checkpoint this instance signed for the tenant
   * when it lies before `fromSeq` (a chain rewritten behind it is refused).
   */
  exportAuditLog(tenantId: string, fromSeq?: number): AsyncIterable<string> {
    const settings = this.#settings;
    return {
      async *[Symbol.asyncIterator]() {
        if (!settings.audits) throw new TypeError(NO_AUDIT);
        await settings.loaded();
        yield* settings.audit!.export(tenantId, fromSeq);
      },
    };
  }

  /**
   * The head of `tenantId`'s audit chain signed now (`null` while empty):
   * keep it elsewhere. Signed only once the chain verifies up to it (from the
   * last checkpoint this instance signed, else from the anchor); else it
   * rejects with an `Error` named `AuditChainError` naming the record.
   */
  auditCheckpoint(tenantId: string): Promise<AuditCheckpoint | null> {
    return this.#audit().then((log) => log.checkpoint(tenantId));
  }

  /**
   * Drops `tenantId`'s audit records written before `before` (the last one
   * is always kept); the rest still verifies from its first record (the
   * anchor). Resolves how many were dropped; needs the storage's `pruneAudit`.
   */
  pruneAuditLog(tenantId: string, before: Date): Promise<number> {
    return this.#audit().then((log) => log.prune(tenantId, before));
  }

  async #audit(): Promise<AuditLog> {
    const settings = this.#settings;
    if (!settings.audits) throw new TypeError(NO_AUDIT);
    await settings.loaded();
    return settings.audit!;
  }

  /**
   * Flushes the usage counts held in memory and writes the credit balances
   * of a Redis limiter store back (see `persistIntervalMs`), stopping their
   * timers (the Nest module calls it on shutdown), waits for the first uses
   * of rotations that wait for their new key to lower the old key's expiry,
   * then for the audit records written in the background (refusal
   * aggregates, the jobs' records, checkpoints). Rejects with the first failure
   * (`ApiKeyStorageError` for a write); what failed stays held for another
   * `close()`.
   */
  async close(): Promise<void> {
    const settings = this.#settings;
    const [usage, credits] = await Promise.allSettled([
      settings.recordsUsage ? settings.loaded().then(() => settings.usage?.close()) : undefined,
      this.#credits.use((book) => book.close()),
      this.#verify.loaded?.settled(),
    ]);
    if (settings.audits) await settings.loaded().then(() => settings.audit?.settled(), () => {});
    for (const result of [usage, credits]) if (result.status === "rejected") throw result.reason;
  }
}

const PREFIX = "ApiKeysServiceOptions.";
const NO_AUDIT = "the audit log needs ApiKeysServiceOptions.audit";

/** With the audit log, the recorder of the admin routes' refusals (same door as every record). */
function auditedRefusal(settings: Settings): ServiceHooks["recordRefusal"] {
  if (!settings.audits) return undefined;
  return async (tenantId, context, key, asked, exceeds) => {
    const [{ change }] = await Promise.all([import("./audit/_log.ts"), settings.loaded()]);
    const audit = settings.audit!;
    await audit.append(
      audit.entry(tenantId, "key.escalation_refused", context, "app", key, {
        asked: change(null, asked),
        exceeds: change(null, exceeds),
      }, "refused"),
    );
  };
}

/** Reads of a key's name and conditional renames tried, at most, by one audited rename. */
const RENAME_ATTEMPTS = 5;

/**
 * The storage's `renameForTenant` for the admin routes; with the audit log,
 * the record is read first (for the name before) and the rename recorded in
 * the same step: with `replaceNameForTenant`, only while the name is the one
 * read (read again and retried when another rename came between, up to
 * `RENAME_ATTEMPTS` times, then `ApiKeyStorageError`), so each record's
 * `before` is the name its rename replaced. With `expectedName`, only over
 * that name, through `replaceNameForTenant` (no retry: `false` when the name
 * is another; a `TypeError` without the capability, which the routes check
 * first: a read then a rename would not be atomic).
 */
function auditedRename(
  settings: Settings,
): ServiceHooks["renameForTenant"] {
  const { storage } = settings;
  const { renameForTenant: rename, replaceNameForTenant: replace } = storage;
  if (rename === undefined) return undefined;
  /** The rename recording nothing (no audit log, or not the tenant's key), over `expectedName` if any. */
  const plain = async (tenantId: string, id: string, name: string, expectedName?: string) => {
    if (expectedName === undefined) {
      await rename(tenantId, id, name);
      return true;
    }
    return await replace!(tenantId, id, expectedName, name);
  };
  return async (tenantId, id, name, context, options) => {
    const expectedName = options?.expectedName;
    if (expectedName !== undefined && replace === undefined) {
      throw new TypeError("a rename with expectedName needs the storage's replaceNameForTenant");
    }
    if (!settings.audits) return await plain(tenantId, id, name, expectedName);
    const [{ change }] = await Promise.all([import("./audit/_log.ts"), settings.loaded()]);
    const audit = settings.audit!;
    for (let attempt = 1;; attempt++) {
      const record = await storage.findById(id);
      // Another tenant's or an unknown key: the rename rejects it, recording nothing.
      if (record === null || record.tenantId !== tenantId) {
        return await plain(tenantId, id, name, expectedName);
      }
      if (expectedName !== undefined && record.name !== expectedName) return false;
      const entry = audit.entry(tenantId, "key.renamed", context, "app", record, {
        name: change(record.name, name),
      });
      if (replace === undefined) await rename(tenantId, id, name, entry);
      else if (!await replace(tenantId, id, record.name, name, entry)) {
        if (expectedName !== undefined) return false;
        if (attempt < RENAME_ATTEMPTS) continue;
        throw new ApiKeyStorageError(
          "replaceNameForTenant",
          new Error(`the key's name changed before each of ${RENAME_ATTEMPTS} renames`),
        );
      }
      audit.appended(tenantId);
      return true;
    }
  };
}
