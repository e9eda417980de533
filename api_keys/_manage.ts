/**
 * The manage flow of `ApiKeysService`: create, rotate, revoke and list keys
 * (and their tenant-bound forms), with input validation, the TTL policy and
 * lifecycle events. Create and rotate issue their new key with one function,
 * which draws a new key while its prefix is taken (3 attempts).
 *
 * @module
 */
import {
  ApiKeyAuditNotRecordedError,
  ApiKeyOperationError,
  ApiKeyPrefixCollisionError,
  ApiKeyStorageError,
} from "./errors.ts";
import {
  balanceKeyOf,
  compileKeyCreditChange,
  type CreditBook,
  type KeyBalances,
} from "./metering/_credits.ts";
import { createdEvent } from "./events.ts";
import { requireRotationWaits } from "./verify/_first_use.ts";
import { fail, requireNonEmptyString, requireTenantId } from "./_input.ts";
import { validateCreateInput, validateListOptions, validateRotateInput } from "./_key_input.ts";
import { generateKey } from "./key_format.ts";
import {
  assertTenantSharedPolicies,
  creditPartsOf,
  storedRateLimits,
  storedRefill,
} from "./metering/_limits.ts";
import { statusOf } from "./storage/_paging.ts";
import { DeadlineExceeded } from "./storage/_access.ts";
import { newRecordId } from "./_uuid_v7.ts";
import type { Settings } from "./_settings.ts";
import { change, createdChanges } from "./audit/_log.ts";
import type { AuditChange, AuditContext } from "./audit/types.ts";
import type { ListApiKeyPageOptions } from "./storage/types.ts";
import type { CreditRefill } from "../rate_limits/mod.ts";
import { MAX_CREDITS } from "../rate_limits/credits.ts";
import type {
  ApiKeyCreditBalance,
  ApiKeyCreditChange,
  ApiKeyCredits,
  ApiKeyRateLimitPolicy,
  ApiKeyRecord,
  ApiKeySummary,
  ApiKeySummaryCredits,
  CreateApiKeyInput,
  CreateApiKeyResult,
  Environment,
  ListApiKeysOptions,
  RotateApiKeyInput,
  RotateApiKeyResult,
} from "./types.ts";

/** Keys drawn by one create or rotate before it gives up on prefix collisions. */
const PREFIX_ATTEMPTS = 3;

/** The summary of `record`: its fields listed one by one, so no hash field is ever copied. */
function toSummary(record: ApiKeyRecord, nowMs: number, balances: KeyBalances): ApiKeySummary {
  const copy = (date: Date | null) => date === null ? null : new Date(date.getTime());
  const parts = record.credits && creditPartsOf(record.credits);
  const summary: ApiKeySummary = {
    id: record.id,
    tenantId: record.tenantId,
    name: record.name,
    environment: record.environment,
    prefix: record.prefix,
    scopes: [...record.scopes],
    allowedIpCidrs: [...(record.allowedIpCidrs ?? [])],
    status: statusOf(record, nowMs),
    lastUsedAt: copy(record.lastUsedAt),
    expiresAt: copy(record.expiresAt),
    revokedAt: copy(record.revokedAt),
    rotatedAt: copy(record.rotatedAt),
    replacedByKeyId: record.replacedByKeyId,
    createdBy: record.createdBy,
    createdAt: new Date(record.createdAt.getTime()),
  };
  if (record.rateLimits !== undefined) {
    // The stored form: a field of another version left out, so a copy passed back is input.
    summary.rateLimits = storedRateLimits(record.rateLimits).map((p) => ({ ...p }));
  }
  const withRule = (balance: ApiKeyCreditBalance, refill: CreditRefill | undefined) =>
    refill === undefined ? balance : { ...balance, refill: storedRefill(refill) };
  if (balances.key !== undefined) summary.credits = withRule(balances.key, parts?.own?.refill);
  if (balances.tenant !== undefined) {
    summary.tenantCredits = withRule(balances.tenant, parts?.pool?.refill);
  }
  return summary;
}

/** What a new key's record takes from its caller (create or rotate). */
interface NewKeyFields {
  tenantId: string;
  name: string;
  environment: Environment;
  scopes: string[];
  allowedIpCidrs: string[];
  expiresAt: Date | null;
  createdBy: string | null;
  rateLimits?: readonly ApiKeyRateLimitPolicy[];
  rateLimitKeyId?: string;
  credits?: ApiKeyCredits;
}

/** A create's or rotate's result and the summary of the record it wrote. */
export interface Written<T> {
  result: T;
  written: ApiKeySummary;
  /** The new key's credit join write that failed after it was stored (`CreditBook.joined`). */
  joinFailure?: unknown;
}

/**
 * What limits a key, as the admin routes' no-escalation rule compares two
 * keys: its rate-limit policies, whose window counters it counts on, whose
 * balance of its own it spends, and whether it spends its tenant's pool.
 */
export interface KeyLimits {
  /** Its rate-limit policies (none: `[]`). */
  rateLimits: readonly ApiKeyRateLimitPolicy[];
  /** Id of the key whose window counters it counts on (its own id, or its chain's first key's). */
  windowsOf: string;
  /** Id of the key whose balance of its own it spends; `null`: none. */
  balanceOf: string | null;
  /** Whether it spends its tenant's shared pool. */
  pool: boolean;
}

/** Creates, rotates, revokes and lists keys with the compiled settings. */
export class ManageFlow {
  readonly #s: Settings;
  readonly #credits: CreditBook;

  /** A flow over `settings`, with the keys' credits in `credits`. */
  constructor(settings: Settings, credits: CreditBook) {
    this.#s = settings;
    this.#credits = credits;
  }

  /** See `ApiKeysService.create`. */
  async create(input: CreateApiKeyInput, context?: AuditContext): Promise<CreateApiKeyResult> {
    return (await this.createWithRecord(input, context)).result;
  }

  /**
   * `create`, with the summary of the record as written (no balance read):
   * what the admin routes answer when reading the key back fails.
   */
  async createWithRecord(
    input: CreateApiKeyInput,
    context?: AuditContext,
  ): Promise<Written<CreateApiKeyResult>> {
    const s = this.#s;
    const valid = validateCreateInput(input, s.layouts);
    const now = s.clock();
    const credits = await this.#credits.compile(input.credits, valid.tenantId, now);
    const source = valid.limitsOf === undefined
      ? undefined
      : await this.#find(valid.tenantId, valid.limitsOf);
    if (source?.credits !== undefined && credits !== undefined) {
      fail(
        "credits",
        "cannot be given with limitsOf a key with credits: the key spends its balance",
      );
    }
    const rateLimits = valid.rateLimits ?? source?.rateLimits;
    await this.#checkRateLimits(valid.tenantId, rateLimits);
    /** After the write; also when it lands past the storage deadline (the call then rejected). */
    const wrote = (record: ApiKeyRecord): void => {
      s.audit?.appended(record.tenantId);
      s.fleet?.wrote("created", record.prefix);
      s.emitEvent?.(createdEvent(record, now));
    };
    const { record, key } = await this.#issue(
      "create",
      {
        ...valid,
        expiresAt: s.resolveExpiry(valid.expiresAt, now),
        rateLimits,
        // Shared like a rotation's successor: the source's window counters and balance.
        rateLimitKeyId: source === undefined ? undefined : source.rateLimitKeyId ?? source.id,
        credits: source?.credits === undefined ? credits : await this.#credits.inherit(source, now),
      },
      now,
      (record) =>
        s.storage.insert(
          record,
          s.audit?.entry(record.tenantId, "key.created", context, "app", record, {
            ...createdChanges(record),
            ...(record.rateLimits === undefined
              ? {}
              : { rateLimits: change(null, record.rateLimits) }),
            ...(record.credits === undefined
              ? {}
              : { credits: change(null, record.credits.remaining) }),
          }),
          { answer: () => wrote(record) },
        ),
    );
    // A balance it shares whose rule changed while it was made: the new rule (free refills otherwise).
    const joinFailure = await this.#credits.joined(record);
    wrote(record);
    return {
      result: { id: record.id, key },
      written: toSummary(record, now.getTime(), {}),
      ...(joinFailure === undefined ? {} : { joinFailure }),
    };
  }

  /** See `ApiKeysService.rotate`. */
  rotate(
    id: string,
    input?: RotateApiKeyInput,
    context?: AuditContext,
  ): Promise<RotateApiKeyResult> {
    return this.#rotate(undefined, id, input, context).then(({ result }) => result);
  }

  /** See `ApiKeysService.rotateForTenant`. */
  rotateForTenant(
    tenantId: string,
    id: string,
    input?: RotateApiKeyInput,
    context?: AuditContext,
  ): Promise<RotateApiKeyResult> {
    return this.rotateWithRecord(tenantId, id, input, context).then(({ result }) => result);
  }

  /** `rotateForTenant`, with the summary of the new record as written (no balance read). */
  rotateWithRecord(
    tenantId: string,
    id: string,
    input?: RotateApiKeyInput,
    context?: AuditContext,
  ): Promise<Written<RotateApiKeyResult>> {
    return this.#rotate(tenantId, id, input, context);
  }

  /**
   * `rotate`, of a record of `tenantId` only when it is given. A new key
   * taking the old one's name is written only while the old record still
   * holds it (`expectedName`); refused, it is tried once more from a fresh
   * read, so a rename landing meanwhile is the new key's.
   */
  async #rotate(
    tenantId: string | undefined,
    id: string,
    input: RotateApiKeyInput | undefined,
    context: AuditContext | undefined,
    retry = true,
  ): Promise<Written<RotateApiKeyResult>> {
    const s = this.#s;
    if (tenantId !== undefined) requireTenantId(tenantId);
    requireNonEmptyString(id, "id");
    const now = s.clock();
    const valid = validateRotateInput(input, now, s.layouts);
    const waits = valid.graceStarts === "first-use" ? requireRotationWaits(s) : undefined;
    const old = await this.#find(tenantId, id);
    const newCredits = await this.#credits.compile(input?.credits, old.tenantId, now);
    await this.#checkRateLimits(old.tenantId, valid.rateLimits, old.id);
    if (
      old.revokedAt !== null || old.rotatedAt !== null || old.replacedByKeyId !== null ||
      (old.expiresAt !== null && old.expiresAt.getTime() <= now.getTime())
    ) {
      throw new ApiKeyOperationError("api_key_not_rotatable");
    }
    const expiresAt = s.resolveExpiry(valid.expiresAt, now, old.expiresAt);
    // With graceStarts "first-use", the upper bound (maxWaitMs is 0 otherwise). Never past the
    // old key's expiry nor its successor's (capped by the TTL policy).
    const graceExpiresAt = new Date(
      Math.min(
        now.getTime() + valid.maxWaitMs + valid.gracePeriodMs,
        old.expiresAt?.getTime() ?? Infinity,
        expiresAt?.getTime() ?? Infinity,
      ),
    );
    /** After the write; also when it lands past the storage deadline (the call then rejected). */
    const wrote = (record: ApiKeyRecord): void => {
      s.audit?.appended(old.tenantId);
      s.cache?.invalidate(old.prefix);
      s.fleet?.wrote("created", record.prefix);
      s.fleet?.wrote("rotated", old.prefix);
      s.emitEvent?.({
        type: "api_key.rotated",
        at: now,
        tenantId: old.tenantId,
        oldKeyId: old.id,
        oldPrefix: old.prefix,
        newKeyId: record.id,
        newPrefix: record.prefix,
        environment: record.environment,
        scopes: [...record.scopes],
        graceExpiresAt: new Date(graceExpiresAt.getTime()),
        graceStarts: valid.graceStarts,
        createdBy: record.createdBy,
      });
    };
    const issuing = this.#issue(
      "rotate",
      {
        tenantId: old.tenantId,
        name: valid.name ?? old.name,
        environment: old.environment,
        scopes: [...old.scopes],
        allowedIpCidrs: valid.allowedIpCidrs ?? [...(old.allowedIpCidrs ?? [])],
        expiresAt,
        createdBy: valid.createdBy ?? null,
        rateLimits: valid.rateLimits ?? old.rateLimits,
        // The successor counts on the chain's window counters, as it spends its balance.
        rateLimitKeyId: old.rateLimitKeyId ?? old.id,
        credits: newCredits ?? await this.#credits.inherit(old, now),
      },
      now,
      async (record) => {
        // Saved first: the new key cannot be used before the rotation, and a failed rotation
        // leaves only a wait no key will ever claim.
        await waits?.save({
          newKeyId: record.id,
          oldKeyId: old.id,
          gracePeriodMs: valid.gracePeriodMs,
          waitEndsAt: graceExpiresAt,
        });
        const rotation = {
          oldKeyId: old.id,
          newRecord: record,
          oldExpiresAt: graceExpiresAt,
          rotatedAt: now,
          ...(valid.name === undefined ? { expectedName: old.name } : {}),
        };
        const changes: Record<string, AuditChange> = {
          replacedByKeyId: change(null, record.id),
          newPrefix: change(null, record.prefix),
          expiresAt: change(old.expiresAt, graceExpiresAt),
          newKeyExpiresAt: change(old.expiresAt, record.expiresAt),
        };
        if (record.name !== old.name) changes.name = change(old.name, record.name);
        const allowlist = old.allowedIpCidrs ?? [];
        if ((record.allowedIpCidrs ?? []).join() !== allowlist.join()) {
          changes.allowedIpCidrs = change(allowlist, record.allowedIpCidrs);
        }
        const audit = s.audit?.entry(old.tenantId, "key.rotated", context, "app", old, changes);
        const late = { answer: () => wrote(record) };
        const answer =
          await (tenantId === undefined
            ? s.storage.rotate(rotation, audit, late)
            : s.storage.rotateForTenant(tenantId, rotation, audit, late));
        if (answer === undefined) await this.#wonRotation(old.id, record.id, now);
      },
    );
    let issued: { record: ApiKeyRecord; key: string };
    try {
      issued = await issuing;
    } catch (error) {
      const refused = error instanceof ApiKeyOperationError &&
        error.code === "api_key_not_rotatable";
      if (!retry || valid.name !== undefined || !refused) throw error;
      return await this.#rotate(tenantId, id, input, context, false);
    }
    const { record, key } = issued;
    const joinFailure = await this.#credits.joined(record);
    wrote(record);
    return {
      result: { id: record.id, key, replacedKeyId: old.id, graceExpiresAt },
      written: toSummary(record, now.getTime(), {}),
      ...(joinFailure === undefined ? {} : { joinFailure }),
    };
  }

  /**
   * See `ApiKeysService.revoke`; `onRevoked` runs only when this call revoked
   * the key, right before `api_key.revoked`; `onLate` gets, when the write is
   * still pending at the storage deadline (this call then rejects), a promise
   * that resolves once it settles (after `onRevoked` if it revoked).
   */
  revoke(
    id: string,
    onRevoked?: () => void,
    context?: AuditContext,
    onLate?: (settled: Promise<void>) => void,
  ): Promise<void> {
    return this.#revoke(undefined, id, onRevoked, context, onLate);
  }

  /** See `ApiKeysService.revokeForTenant`. */
  revokeForTenant(tenantId: string, id: string, context?: AuditContext): Promise<void> {
    return this.#revoke(tenantId, id, undefined, context);
  }

  /** `revoke`, of a record of `tenantId` only when it is given. */
  async #revoke(
    tenantId: string | undefined,
    id: string,
    onRevoked: (() => void) | undefined,
    context: AuditContext | undefined,
    onLate?: (settled: Promise<void>) => void,
  ): Promise<void> {
    const s = this.#s;
    if (tenantId !== undefined) requireTenantId(tenantId);
    requireNonEmptyString(id, "id");
    const record = await this.#find(tenantId, id);
    // Dropped even when already revoked: another process may have revoked it while cached here.
    s.cache?.invalidate(record.prefix);
    if (record.revokedAt !== null) return;
    const now = s.clock();
    const audit = s.audit?.entry(record.tenantId, "key.revoked", context, "app", record, {
      revokedAt: change(null, now),
    });
    // After the write; also when it lands past the storage deadline (this call then rejected).
    const wrote = (revoked: boolean): void => {
      // Again: a verify that read the record during the write may have cached it.
      s.cache?.invalidate(record.prefix);
      // A concurrent revoke won (only known with markRevokedIfActive): it changed and emitted.
      if (!revoked) return;
      s.audit?.appended(record.tenantId);
      s.fleet?.wrote("revoked", record.prefix);
      onRevoked?.();
      s.emitEvent?.({
        type: "api_key.revoked",
        at: now,
        keyId: record.id,
        tenantId: record.tenantId,
        prefix: record.prefix,
        environment: record.environment,
      });
    };
    const late = { answer: wrote, pending: onLate };
    wrote(
      await (tenantId === undefined
        ? s.storage.revoke(id, now, audit, late)
        : s.storage.revokeForTenant(tenantId, id, now, audit, late)),
    );
  }

  /** See `ApiKeysService.list`. */
  list(tenantId: string, options?: ListApiKeysOptions): Promise<ApiKeyRecord[]> {
    try {
      requireTenantId(tenantId);
      return this.#s.storage.listByTenant(tenantId, validateListOptions(options));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** See `ApiKeysService.listSummaries`. */
  async listSummaries(tenantId: string, options?: ListApiKeysOptions): Promise<ApiKeySummary[]> {
    const records = await this.list(tenantId, options);
    const balances = await this.#credits.balances(records);
    const nowMs = this.#s.clock().getTime();
    return records.map((record, i) => toSummary(record, nowMs, balances[i]));
  }

  /**
   * The summary of tenant `tenantId`'s key `id` as `listSummaries` gives it
   * (its pool from the tenant's newest copy), or `null` for an unknown id or
   * another tenant's key: `summariesOf` of the one id.
   */
  async summaryOf(tenantId: string, id: string): Promise<ApiKeySummary | null> {
    return (await this.summariesOf(tenantId, [id]))[0];
  }

  /**
   * `summaryOf` of each of `ids` (distinct, at most `MAX_KEYS_PER_READ`), in
   * order: one storage read (`findManyByIds`, else one per id) and one read
   * of their balances.
   */
  async summariesOf(tenantId: string, ids: readonly string[]): Promise<(ApiKeySummary | null)[]> {
    requireTenantId(tenantId);
    const found = await this.#s.storage.findManyByIds(tenantId, ids);
    const records = found.filter((record) => record !== null);
    const balances = await this.#credits.keyBalances(tenantId, records);
    const nowMs = this.#s.clock().getTime();
    const summaries = new Map(
      records.map((record, i) => [record.id, toSummary(record, nowMs, balances[i])]),
    );
    return ids.map((id) => summaries.get(id) ?? null);
  }

  /**
   * The limits of each of tenant `tenantId`'s keys `ids` (distinct, at most
   * `MAX_KEYS_PER_READ`), in order, as their records hold them (`null`: an
   * unknown id or another tenant's key): one storage read, no balance read.
   */
  async keyLimitsOf(tenantId: string, ids: readonly string[]): Promise<(KeyLimits | null)[]> {
    requireTenantId(tenantId);
    const found = await this.#s.storage.findManyByIds(tenantId, ids);
    return found.map((record) => {
      if (record === null) return null;
      const { credits } = record;
      return {
        rateLimits: record.rateLimits ?? [],
        windowsOf: record.rateLimitKeyId ?? record.id,
        balanceOf: (credits && balanceKeyOf(credits, record.id)) ?? null,
        pool: credits !== undefined && creditPartsOf(credits).pool !== undefined,
      };
    });
  }

  /** The id of tenant `tenantId`'s key that key `id` replaced (a rotation), or `null`. */
  async predecessorOf(tenantId: string, id: string): Promise<string | null> {
    requireTenantId(tenantId);
    return (await this.#s.storage.findByReplacement(tenantId, id))?.id ?? null;
  }

  /**
   * One page of a tenant's keys as summaries (see
   * `ApiKeyStorage.listPageByTenant`), with each one's predecessor by id.
   * Reads only.
   */
  async listSummaryPage(
    tenantId: string,
    options: ListApiKeyPageOptions,
  ): Promise<{ summaries: ApiKeySummary[]; predecessors: Record<string, string> }> {
    requireTenantId(tenantId);
    const { records, predecessors } = await this.#s.storage.listPage(tenantId, options);
    const balances = await this.#credits.balances(records);
    const nowMs = this.#s.clock().getTime();
    return {
      summaries: records.map((record, i) => toSummary(record, nowMs, balances[i])),
      predecessors,
    };
  }

  /** See `ApiKeysService.updateCredits`: key `id`'s own balance, or with `id` `null` the tenant's pool. */
  async updateCredits(
    tenantId: string,
    id: string | null,
    creditChange: ApiKeyCreditChange,
    context?: AuditContext,
  ): Promise<ApiKeyCreditBalance> {
    requireTenantId(tenantId);
    if (id !== null) requireNonEmptyString(id, "id");
    const valid = compileKeyCreditChange(creditChange);
    this.#credits.requireLimiter();
    const audit = this.#s.audit;
    // The context checked before the change: a refused one changes nothing.
    const checked = audit?.context(context, "app");
    // The record (or the pool) and its rule are read in the change's turn, after those before it.
    const { record, balance, before, ruleBefore } = id === null
      ? await this.#credits.updatePool(tenantId, valid)
      : await this.#credits.update(() => this.#find(tenantId, id), valid);
    if (audit === undefined) return balance;
    // The credit store is not the audit storage (no shared transaction): a record that fails
    // now is named as such, never answered as a change that did not happen.
    try {
      await audit.append(
        audit.entry(tenantId, "key.credits_updated", checked, "app", record, {
          credits: change(before ?? balanceBefore(valid, balance.remaining), balance.remaining),
          ...("refill" in valid ? { refill: change(ruleBefore, valid.refill) } : {}),
          request: change(null, valid),
        }),
      );
    } catch (error) {
      throw new ApiKeyAuditNotRecordedError(balance, error);
    }
    return balance;
  }

  /** See `ApiKeysService.tenantCredits`. */
  async tenantCredits(tenantId: string): Promise<ApiKeySummaryCredits | null> {
    requireTenantId(tenantId);
    return await this.#credits.poolOf(tenantId);
  }

  /**
   * Refuses `rateLimits` without the `storesRateLimits` capability (`TypeError`) and a
   * shared policy another key of the tenant (not `exceptId`) has with another limit or window.
   */
  async #checkRateLimits(
    tenantId: string,
    rateLimits: readonly ApiKeyRateLimitPolicy[] | undefined,
    exceptId?: string,
  ): Promise<void> {
    if (rateLimits === undefined) return;
    if (this.#s.limits === undefined) throw new TypeError("rateLimits need the service's limiter");
    if (!this.#s.storage.storesRateLimits) {
      throw new TypeError("rateLimits need a storage with the storesRateLimits capability");
    }
    if (!rateLimits.some((policy) => policy.sharedBy === "tenant")) return;
    const records = await this.#s.storage.listByTenant(tenantId, false);
    assertTenantSharedPolicies(rateLimits, records.filter((record) => record.id !== exceptId));
  }

  /** The record of `id` (of `tenantId` when given); otherwise `api_key_record_not_found`. */
  async #find(tenantId: string | undefined, id: string): Promise<ApiKeyRecord> {
    const record = await this.#s.storage.findById(id);
    if (record === null || (tenantId !== undefined && record.tenantId !== tenantId)) {
      throw new ApiKeyOperationError("api_key_record_not_found");
    }
    return record;
  }

  /**
   * Issues a new key made at `now` and `write`s its record, drawing another
   * key while the prefix is taken; after `PREFIX_ATTEMPTS` draws, emits
   * `api_key.operation` and throws `ApiKeyPrefixCollisionError`. Any other
   * failure is thrown as it is.
   */
  async #issue(
    operation: "create" | "rotate",
    fields: NewKeyFields,
    now: Date,
    write: (record: ApiKeyRecord) => Promise<void>,
  ): Promise<{ record: ApiKeyRecord; key: string }> {
    for (let attempt = 1;; attempt++) {
      const issued = await this.#newKey(fields, now);
      try {
        await write(issued.record);
        return issued;
      } catch (error) {
        if (!await this.#prefixTaken(issued.record, error)) throw error;
        if (attempt < PREFIX_ATTEMPTS) continue;
        this.#s.emitOperationMetric?.({
          type: "api_key.operation",
          operation,
          outcome: "prefix_collision_exhausted",
          attempts: attempt,
        });
        throw new ApiKeyPrefixCollisionError(operation, attempt, error);
      }
    }
  }

  /**
   * After a rotation of `oldId` to `newId` a storage written for the spec
   * answered nothing for (its `rotate` maybe not atomic): refused with
   * `api_key_not_rotatable`, `newId` revoked, when the old record names another
   * successor (two concurrent rotations both past its check: the one written
   * last won). A storage that records no successor (`@nestarc/api-keys` 0.1's
   * shape) is trusted.
   */
  async #wonRotation(oldId: string, newId: string, now: Date): Promise<void> {
    const s = this.#s;
    const successor = (await s.storage.findById(oldId))?.replacedByKeyId;
    if (successor === undefined || successor === null || successor === newId) return;
    await s.storage.revoke(newId, now);
    throw new ApiKeyOperationError("api_key_not_rotatable");
  }

  /**
   * Whether a storage failure writing `record` came from another record holding its prefix (never
   * a write past its deadline, which may still land: no lookup then).
   */
  async #prefixTaken(record: ApiKeyRecord, error: unknown): Promise<boolean> {
    if (!(error instanceof ApiKeyStorageError) || error.cause instanceof DeadlineExceeded) {
      return false;
    }
    try {
      const holder = await this.#s.storage.findByPrefix(record.prefix);
      return holder !== null && holder.id !== record.id;
    } catch {
      return false;
    }
  }

  /** A new key and its record, made at `now`: the one builder of create and rotate. */
  async #newKey(
    fields: NewKeyFields,
    now: Date,
  ): Promise<{ record: ApiKeyRecord; key: string }> {
    const s = this.#s;
    const key = generateKey({ environment: fields.environment, namespace: s.namespace });
    const { hash, pepperVersion } = await s.hasher.hash(key.secret);
    const id = newRecordId(s.idFactory);
    const record: ApiKeyRecord = {
      id,
      tenantId: fields.tenantId,
      name: fields.name,
      environment: fields.environment,
      prefix: key.prefix,
      hash,
      pepperVersion,
      scopes: fields.scopes,
      allowedIpCidrs: fields.allowedIpCidrs,
      lastUsedAt: null,
      expiresAt: fields.expiresAt,
      revokedAt: null,
      rotatedAt: null,
      replacedByKeyId: null,
      createdBy: fields.createdBy,
      createdAt: now,
    };
    if (fields.rateLimits !== undefined) {
      record.rateLimits = fields.rateLimits.map((p) => ({ ...p }));
    }
    if (fields.rateLimitKeyId !== undefined && s.storage.storesRateLimits) {
      record.rateLimitKeyId = fields.rateLimitKeyId;
    }
    if (fields.credits !== undefined) record.credits = fields.credits;
    return { record, key: key.raw };
  }
}

/**
 * The balance credit change `valid` was applied to, over a store whose answer
 * to it does not tell it (one that does answers `before`), from its answer
 * `after` to that one atomic step (a read apart would see a concurrent change):
 * an add no bound held (0, `MAX_CREDITS`), or a rule alone (the balance kept).
 * `null` where `after` does not tell it: a set, an add held at a bound.
 */
function balanceBefore(valid: ApiKeyCreditChange, after: number): number | null {
  if ("add" in valid) {
    const held = (valid.add < 0 && after === 0) || (valid.add > 0 && after === MAX_CREDITS);
    return held ? null : after - valid.add;
  }
  return "set" in valid && valid.set !== undefined ? null : after;
}
