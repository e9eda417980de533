/**
 * The storage wrapper of `ApiKeysService`, the one way both flows reach the
 * storage: each call runs under the deadline with failures mapped to
 * `ApiKeyStorageError`; every answer is read through the checks of
 * `_answers.ts` (loaded after construction: `./api-keys/nest` does not load
 * them at import, issue 41); the capabilities (optional methods of
 * `ApiKeyStorage`) are detected once, at construction.
 *
 * @module
 */
import { ApiKeyOperationError, ApiKeyStorageError } from "../errors.ts";
import { storableTextProblem } from "../_input.ts";
import { type Redact, warnOnce } from "../_sinks.ts";
import { callDetached } from "../../telemetry/_detached.ts";
import { errorNameOf } from "../../telemetry/_error_name.ts";
import type { Settled } from "../../telemetry/_taps.ts";
import type { AuditAppend, AuditReadQuery, StoredAuditRecord } from "../audit/types.ts";
import {
  API_KEY_STORAGE_METHODS,
  type ApiKeyRotationWait,
  type ApiKeyStorage,
  type ApiKeyStorageCapability,
  type AuditReadAnswer,
  type ListApiKeyPageOptions,
  type ListExpiringApiKeysOptions,
} from "./types.ts";
import type {
  ApiKeyCredits,
  ApiKeyHashCount,
  ApiKeyHashReplacement,
  ApiKeyRecord,
  RotateApiKeyStorageInput,
} from "../types.ts";
import type {
  ApiKeyUsageBucket,
  ApiKeyUsageKeysReadQuery,
  ApiKeyUsageReadQuery,
  ApiKeyUsageRow,
} from "../metering/usage.ts";

/** The checks of the storage's answers (`_answers.ts`). */
type Answers = typeof import("./_answers.ts");

/** How a call's answer is read: the reader picked from the checks (loaded by then). */
type Reader<T> = (answers: Answers) => (value: unknown) => T;

/** What hears of a write still pending when the deadline rejected its call. */
export interface Late<T> {
  /** Gets the answer of the write if it completes. */
  answer: (value: T) => void;
  /**
   * Called at the deadline, before the call rejects, with a promise that
   * resolves once the write settles, completed (after `answer`) or failed.
   */
  pending?: (settled: Promise<void>) => void;
}

/** The rejection of a storage call past its deadline: the call may still land (see `Late`). */
export class DeadlineExceeded extends Error {}

let answers: Answers | undefined;
let loadingAnswers: Promise<Answers> | undefined;

/**
 * Loads the checks of the answers once (the first `StorageAccess` starts it; every call awaits
 * it before calling the storage); a failed load rejects, and the next caller tries again.
 */
function loadAnswers(): Promise<Answers> {
  return loadingAnswers ??= import("./_answers.ts").then((loaded) => answers = loaded, (error) => {
    loadingAnswers = undefined;
    throw error;
  });
}

/**
 * Each capability (the optional methods that come together) and what the
 * service does without it (see `ApiKeyStorage`).
 */
const CAPABILITIES: readonly {
  readonly methods: readonly ApiKeyStorageCapability[];
  readonly without: string;
}[] = Object.freeze([
  {
    methods: ["peekByPrefix"],
    without:
      "each verify awaits findByPrefix, and the verification cache is off unless the cache or feed option is set",
  },
  {
    methods: ["markRevokedIfActive"],
    without: "concurrent revoke() calls of one key may each emit api_key.revoked",
  },
  {
    methods: ["replaceHash"],
    without: "records on a legacy hash scheme or an old pepper version are not upgraded on use",
  },
  { methods: ["countHashes"], without: "hashReport() and retiredPepperVersions are unavailable" },
  { methods: ["listExpiring", "claimExpiryNotice"], without: "notifyExpiring throws" },
  {
    methods: ["saveRotationWait", "findRotationWait", "lowerExpiry"],
    without: 'rotate with graceStarts "first-use" throws',
  },
  {
    methods: ["markRevokedForTenant", "rotateForTenant"],
    without:
      "revokeForTenant and rotateForTenant check the tenant on a read, then act with the untenanted calls",
  },
  { methods: ["renameForTenant"], without: "the admin rename route answers 501" },
  {
    methods: ["replaceNameForTenant"],
    without:
      "a rename with expectedName answers 501; with the audit log, two renames of one key at once may record the same name before",
  },
  {
    methods: ["listPageByTenant"],
    without: "each page of the admin list reads every key of the tenant",
  },
  {
    methods: ["findByReplacement"],
    without: "each admin answer about a key reads every key of the tenant for the key it replaced",
  },
  {
    methods: ["findManyByIds"],
    without: "GET /usage?keys= of the admin routes reads each key by id",
  },
  {
    methods: ["recordUsage", "readUsage"],
    without: "the usage option and usage() are unavailable",
  },
  {
    methods: ["readUsageOfKeys"],
    without: "GET /usage?keys= of the admin routes reads each key apart",
  },
]);

/**
 * Most ids of one read of several keys (`findManyByIds`, `readUsageOfKeys`):
 * the most keys `GET /usage?keys=` of the admin routes accepts.
 */
export const MAX_KEYS_PER_READ = 100;

/**
 * What is wrong with `ids` as the ids of one read of several keys, or
 * `undefined` when they are distinct and at most `MAX_KEYS_PER_READ`: the one
 * rule. Callers wrap the problem in their own error (a `TypeError` here, the
 * admin routes' 400 naming `keys`).
 */
export function keyIdsProblem(ids: readonly string[]): string | undefined {
  if (ids.length > MAX_KEYS_PER_READ) return `must be at most ${MAX_KEYS_PER_READ} key ids`;
  return new Set(ids).size === ids.length ? undefined : "must not name a key id twice";
}

/** `ids` of one read of several keys (see `keyIdsProblem`); else a `TypeError`. */
function assertKeyIds(ids: readonly string[]): void {
  const problem = keyIdsProblem(ids);
  if (problem !== undefined) throw new TypeError(`ids ${problem}`);
}

/**
 * Whether `id` may be a stored key's: text the storage can hold
 * (`storableTextProblem`). Another id is no key's, answered without a call
 * (PostgreSQL refuses U+0000: a 503 for an unknown key).
 */
const mayBeStored = (id: string) => storableTextProblem(id) === undefined;

/**
 * The audit capability of a storage, each call under the deadline and its
 * answer checked (see `ApiKeyStorage.appendAudit`).
 */
export interface AuditAccess {
  /** `appendAudit`, the record read and checked. */
  append(audit: AuditAppend): Promise<StoredAuditRecord>;
  /** `readAudit`, each record read and checked. */
  read(query: AuditReadQuery): Promise<AuditReadAnswer>;
  /** `pruneAudit`, `undefined` without it. */
  prune: ((tenantId: string, before: Date) => Promise<number>) | undefined;
}

/**
 * The expiry-notice capability of a storage, each call under the deadline
 * and its answer checked (see `ApiKeyStorage.listExpiring`).
 */
export interface ExpiryNoticeAccess {
  /** `listExpiring`, each record read and checked. */
  list(options: ListExpiringApiKeysOptions): Promise<ApiKeyRecord[]>;
  /** `claimExpiryNotice`. */
  claim(id: string, thresholdMs: number, at: Date): Promise<boolean>;
}

/**
 * The waiting-rotation capability of a storage, each call under the
 * deadline and its answer checked (see `ApiKeyStorage.saveRotationWait`).
 */
export interface RotationWaitAccess {
  /** `saveRotationWait`. */
  save(wait: ApiKeyRotationWait): Promise<void>;
  /** `findRotationWait`, read and checked. */
  find(newKeyId: string): Promise<ApiKeyRotationWait | null>;
  /** `lowerExpiry`. */
  lowerExpiry(id: string, expectedExpiresAt: Date, nextExpiresAt: Date): Promise<boolean>;
}

/**
 * The usage capability of a storage, each call under the deadline and its
 * answer checked (see `ApiKeyStorage.recordUsage`).
 */
export interface UsageAccess {
  /** The storage deadline (`storageTimeoutMs`) each call runs under. */
  readonly timeoutMs: number;
  /**
   * `recordUsage`, with `batchId` when the storage has `usageBatches`; `late` hears of a write
   * still running at the deadline (see `Late`).
   */
  record(rows: readonly ApiKeyUsageRow[], batchId: string, late?: Late<void>): Promise<void>;
  /** `readUsage`, its buckets checked. */
  read(query: ApiKeyUsageReadQuery): Promise<ApiKeyUsageBucket[]>;
  /**
   * Each key's buckets (`keyIds` distinct, at most `MAX_KEYS_PER_READ`; else a
   * `TypeError`): `readUsageOfKeys` (one read), else `readUsage` per key; checked.
   */
  readKeys(query: ApiKeyUsageKeysReadQuery): Promise<ApiKeyUsageBucket[][]>;
}

const ignore: Reader<void> = () => () => {};

/**
 * The error a failed storage call rejects with: the one way `ApiKeyStorageError`s are built. A
 * cause saying a table, column or function is missing becomes one naming the migration to apply.
 */
function toStorageError(operation: string, error: unknown): Error {
  if (error instanceof ApiKeyOperationError || error instanceof ApiKeyStorageError) return error;
  // The checks are loaded before a storage call (`#call`; `loaded()` before `peek`).
  return new ApiKeyStorageError(operation, answers?.storageErrorCause(error) ?? error);
}

/** `peek` before the checks of the answers loaded (`loaded()`): refused, never unchecked. */
function notLoaded(): never {
  throw new Error("the record checks are not loaded yet (await StorageAccess.loaded() first)");
}

/** The stand-in looked up among the checked records when a prefix is unknown. */
const CHECKED = Object.freeze({});

/** A class name worth printing in `new Name()`. */
const STORAGE_CLASS_NAME = /^[A-Za-z_$][\w$]{0,63}$/;

/**
 * Whether `value`, given as a storage, is a Prisma client (it has `$connect`
 * or an `apiKey` model delegate): read only once a storage method is missing.
 */
function looksLikePrismaClient(value: Record<string, unknown>): boolean {
  const { $connect, apiKey } = value;
  return typeof $connect === "function" || (typeof apiKey === "object" && apiKey !== null);
}

/**
 * The storage as both flows use it (see the module documentation). Built once
 * per service from the `storage` option, which it validates.
 */
export class StorageAccess {
  /**
   * The validated synchronous lookup of the `peekByPrefix` capability
   * (`undefined` without it). Each stored object is checked once (an
   * in-process storage replaces fields only with valid values); an unknown
   * prefix looks up a stand-in, so it costs what a stored one does.
   */
  readonly peek: ((prefix: string) => Readonly<ApiKeyRecord> | null) | undefined;
  /** The line announcing the missing capabilities, `undefined` when none is missing. */
  readonly notice: string | undefined;
  /** The expiry-notice capability, `undefined` without it. */
  readonly expiryNotices: ExpiryNoticeAccess | undefined;
  /** The waiting-rotation capability, `undefined` without it. */
  readonly rotationWaits: RotationWaitAccess | undefined;
  /** `renameForTenant` under the deadline, `undefined` without the capability. */
  readonly renameForTenant:
    | ((tenantId: string, id: string, name: string, audit?: AuditAppend) => Promise<void>)
    | undefined;
  /** `replaceNameForTenant` under the deadline, `undefined` without the capability. */
  readonly replaceNameForTenant:
    | ((
      tenantId: string,
      id: string,
      expectedName: string,
      name: string,
      audit?: AuditAppend,
    ) => Promise<boolean>)
    | undefined;
  /** The usage capability, `undefined` without it. */
  readonly usage: UsageAccess | undefined;
  /** The audit capability (`appendAudit` and `readAudit`), `undefined` without it. */
  readonly audit: AuditAccess | undefined;
  /** The storage's class name (for log lines). */
  readonly name: string;
  /** Whether the storage keeps each record's `layout` (`storesLayout`): a key verifies only in it. */
  readonly storesLayout: boolean;
  /** Whether the storage keeps each record's `rateLimits` (`storesRateLimits`). */
  readonly storesRateLimits: boolean;
  /** `setCredits` under the deadline, `undefined` without `storesCredits`. */
  readonly setCredits: ((id: string, credits: ApiKeyCredits) => Promise<void>) | undefined;
  /**
   * `findTenantPool` under the deadline, its answer checked; `undefined`
   * without the capability (or without `storesCredits`).
   */
  readonly findTenantPool: ((tenantId: string) => Promise<ApiKeyRecord | null>) | undefined;
  /**
   * `setTenantPool` under the deadline, answering the prefixes written;
   * `undefined` without the capability (or without `storesCredits`).
   */
  readonly setTenantPool:
    | ((tenantId: string, remaining: number, updatedAt: Date) => Promise<string[]>)
    | undefined;
  readonly #storage: ApiKeyStorage;
  readonly #timeoutMs: number;
  readonly #markRevokedIfActive:
    | ((id: string, at: Date, audit?: AuditAppend) => Promise<boolean>)
    | undefined;
  readonly #replaceHash:
    | ((id: string, expectedHash: string, next: ApiKeyHashReplacement) => Promise<boolean>)
    | undefined;
  readonly #countHashes: ((now: Date) => Promise<ApiKeyHashCount[]>) | undefined;
  readonly #ready: (() => Promise<void>) | undefined;
  readonly #forTenant:
    | Required<Pick<ApiKeyStorage, "markRevokedForTenant" | "rotateForTenant">>
    | undefined;
  readonly #touchFailed: (error: unknown) => void;
  readonly #lateFailed: (error: unknown) => void;
  readonly #listPage: ApiKeyStorage["listPageByTenant"];
  readonly #findByReplacement: ApiKeyStorage["findByReplacement"];
  readonly #findManyByIds: ApiKeyStorage["findManyByIds"];

  /**
   * Checks `storage` (a `TypeError` naming `label` when a required method is
   * missing or a capability is not a function) and detects its capabilities;
   * starts loading the checks of the answers (see `loaded`). The `notice`
   * leaves out the capabilities in `unused` (the caller turned their use off).
   * Its warnings are redacted with `redact` (the service's, see `Redact`).
   */
  constructor(
    storage: unknown,
    timeoutMs: number,
    label: string,
    unused: readonly ApiKeyStorageCapability[] = [],
    redact?: Redact,
  ) {
    this.#touchFailed = warnOnce("touchLastUsed", redact);
    this.#lateFailed = warnOnce("the steps after a storage write past its deadline", redact);
    if (typeof storage === "function") {
      // The usual mistake: `storage: InMemoryApiKeyStorage`, the class.
      const name = STORAGE_CLASS_NAME.test(storage.name) ? storage.name : "";
      throw new TypeError(
        `${label} must be a storage instance, not a class: pass an instance` +
          (name === "" ? ", e.g. new InMemoryApiKeyStorage()" : `: new ${name}()`),
      );
    }
    if (typeof storage !== "object" || storage === null) {
      throw new TypeError(`${label} is required`);
    }
    loadAnswers().catch(() => {}); // reported to every call (and to `loaded()`) while it fails
    const methods = storage as Record<string, unknown>;
    for (const method of API_KEY_STORAGE_METHODS) {
      if (typeof methods[method] !== "function") {
        if (looksLikePrismaClient(methods)) {
          throw new TypeError(
            `${label} is a Prisma client, not a storage: wrap it in new PrismaApiKeyStorage(prisma)`,
          );
        }
        throw new TypeError(`${label} is missing method ${method}`);
      }
    }
    const missing: string[] = [];
    for (const { methods: group, without } of CAPABILITIES) {
      for (const capability of group) {
        const method = methods[capability];
        if (method !== undefined && typeof method !== "function") {
          throw new TypeError(`${label}.${capability} must be a function`);
        }
      }
      const absent = group.filter((capability) => methods[capability] === undefined);
      if (absent.length > 0 && !absent.every((c) => unused.includes(c))) {
        missing.push(`${absent.join(" or ")} (${without})`);
      }
    }
    const { storesLayout } = storage as ApiKeyStorage;
    if (storesLayout !== undefined && typeof storesLayout !== "boolean") {
      throw new TypeError(`${label}.storesLayout must be a boolean`);
    }
    this.storesLayout = storesLayout === true;
    if (!this.storesLayout) missing.push("storesLayout (a key verifies in any accepted layout)");
    const { rotateChecksName } = storage as ApiKeyStorage;
    if (rotateChecksName !== undefined && typeof rotateChecksName !== "boolean") {
      throw new TypeError(`${label}.rotateChecksName must be a boolean`);
    }
    if (rotateChecksName !== true) {
      missing.push("rotateChecksName (a rename landing during a rotation may miss the new key)");
    }
    const { storesRateLimits } = storage as ApiKeyStorage;
    if (storesRateLimits !== undefined && typeof storesRateLimits !== "boolean") {
      throw new TypeError(`${label}.storesRateLimits must be a boolean`);
    }
    this.storesRateLimits = storesRateLimits === true;
    if (!this.storesRateLimits) {
      missing.push("storesRateLimits (create and rotate refuse rateLimits)");
    }
    const { storesRateLimitKeyId } = storage as ApiKeyStorage;
    if (storesRateLimitKeyId !== undefined && typeof storesRateLimitKeyId !== "boolean") {
      throw new TypeError(`${label}.storesRateLimitKeyId must be a boolean`);
    }
    if (this.storesRateLimits && storesRateLimitKeyId !== true) {
      missing.push(
        "storesRateLimitKeyId (a rotated key without credits counts on its own windows)",
      );
    }
    const store = storage as ApiKeyStorage;
    const { storesCredits, setCredits } = store;
    if (storesCredits !== undefined && typeof storesCredits !== "boolean") {
      throw new TypeError(`${label}.storesCredits must be a boolean`);
    }
    if (storesCredits === true && typeof setCredits !== "function") {
      throw new TypeError(`${label}.setCredits must be a function with storesCredits`);
    }
    this.setCredits = storesCredits === true
      ? (id, credits) =>
        this.#call("setCredits", () => setCredits!.call(store, id, credits), ignore)
      : undefined;
    if (storesCredits !== true) {
      missing.push("storesCredits (create and rotate refuse credits)");
    }
    const { findTenantPool, setTenantPool } = store;
    for (const [name, method] of Object.entries({ findTenantPool, setTenantPool })) {
      if (method !== undefined && typeof method !== "function") {
        throw new TypeError(`${label}.${name} must be a function`);
      }
    }
    this.setTenantPool = storesCredits === true && setTenantPool !== undefined
      ? (tenantId, remaining, updatedAt) =>
        this.#call(
          "setTenantPool",
          () => setTenantPool.call(store, tenantId, remaining, updatedAt),
          (a) => a.readPrefixes,
        )
      : undefined;
    if (storesCredits === true && setTenantPool === undefined) {
      missing.push(
        "setTenantPool (each write-back of a tenant's shared credits reads every key of the tenant)",
      );
    }
    this.findTenantPool = storesCredits === true && findTenantPool !== undefined
      ? (tenantId) =>
        this.#call(
          "findTenantPool",
          () => findTenantPool.call(store, tenantId),
          (a) => a.readPoolRecord(tenantId),
        )
      : undefined;
    if (storesCredits === true && findTenantPool === undefined) {
      missing.push(
        "findTenantPool (each read of a tenant's shared credits reads every key of the tenant)",
      );
    }
    this.#storage = store;
    this.#timeoutMs = timeoutMs;
    this.#markRevokedIfActive = store.markRevokedIfActive?.bind(store);
    this.#replaceHash = store.replaceHash?.bind(store);
    this.#countHashes = store.countHashes?.bind(store);
    this.#ready = store.ready?.bind(store);
    this.#listPage = store.listPageByTenant?.bind(store);
    this.#findByReplacement = store.findByReplacement?.bind(store);
    this.#findManyByIds = store.findManyByIds?.bind(store);
    const { markRevokedForTenant, rotateForTenant } = store;
    this.#forTenant = markRevokedForTenant === undefined || rotateForTenant === undefined
      ? undefined
      : {
        markRevokedForTenant: markRevokedForTenant.bind(store),
        rotateForTenant: rotateForTenant.bind(store),
      };
    const { listExpiring, claimExpiryNotice } = store;
    this.expiryNotices = listExpiring === undefined || claimExpiryNotice === undefined
      ? undefined
      : {
        list: (options) =>
          this.#call(
            "listExpiring",
            () => listExpiring.call(store, options),
            (a) => a.readExpiringPage(options),
          ),
        claim: (id, thresholdMs, at) =>
          this.#call(
            "claimExpiryNotice",
            () => claimExpiryNotice.call(store, id, thresholdMs, at),
            (a) => a.readBoolean,
          ),
      };
    const { saveRotationWait, findRotationWait, lowerExpiry } = store;
    this.rotationWaits =
      saveRotationWait === undefined || findRotationWait === undefined || lowerExpiry === undefined
        ? undefined
        : {
          save: (wait) =>
            this.#call("saveRotationWait", () => saveRotationWait.call(store, wait), ignore),
          find: (newKeyId) =>
            this.#call(
              "findRotationWait",
              () => findRotationWait.call(store, newKeyId),
              (a) => a.readRotationWait,
            ),
          lowerExpiry: (id, expected, next) =>
            this.#call(
              "lowerExpiry",
              () => lowerExpiry.call(store, id, expected, next),
              (a) => a.readBoolean,
            ),
        };
    const { renameForTenant } = store;
    this.renameForTenant = renameForTenant === undefined
      ? undefined
      : (tenantId, id, name, audit) =>
        this.#call(
          "renameForTenant",
          () => renameForTenant.call(store, tenantId, id, name, ...this.#with(audit)),
          ignore,
        );
    const { replaceNameForTenant } = store;
    this.replaceNameForTenant = replaceNameForTenant === undefined
      ? undefined
      : (tenantId, id, expectedName, name, audit) =>
        this.#call(
          "replaceNameForTenant",
          () =>
            replaceNameForTenant.call(
              store,
              tenantId,
              id,
              expectedName,
              name,
              ...this.#with(audit),
            ),
          (a) => a.readBoolean,
        );
    const { recordUsage, readUsage, readUsageOfKeys, usageBatches } = store;
    if (readUsageOfKeys !== undefined && typeof readUsageOfKeys !== "function") {
      throw new TypeError(`${label}.readUsageOfKeys must be a function`);
    }
    if (usageBatches !== undefined && typeof usageBatches !== "boolean") {
      throw new TypeError(`${label}.usageBatches must be a boolean`);
    }
    if (usageBatches === true && recordUsage === undefined) {
      throw new TypeError(`${label}.recordUsage must be a function with usageBatches`);
    }
    if (recordUsage !== undefined && usageBatches !== true) {
      missing.push("usageBatches (a usage write retried after storageTimeoutMs may count twice)");
    }
    this.usage = recordUsage === undefined || readUsage === undefined ? undefined : {
      timeoutMs: this.#timeoutMs,
      record: (rows, batchId, late) =>
        this.#call(
          "recordUsage",
          () =>
            usageBatches === true
              ? recordUsage.call(store, rows, batchId)
              : recordUsage.call(store, rows),
          ignore,
          late,
        ),
      read: (query) =>
        this.#call(
          "readUsage",
          () => readUsage.call(store, query),
          (a) => a.readUsageBuckets(query),
        ),
      readKeys: (query) => {
        const { tenantId, keyIds, from, to, granularity } = query;
        try {
          assertKeyIds(keyIds);
        } catch (error) {
          return Promise.reject(error);
        }
        if (readUsageOfKeys === undefined) {
          return Promise.all(
            keyIds.map((keyId) => this.usage!.read({ tenantId, keyId, from, to, granularity })),
          );
        }
        return this.#call("readUsageOfKeys", () => readUsageOfKeys.call(store, query), (a) => {
          const one = a.readUsageBuckets(query);
          return (value) => {
            if (!Array.isArray(value) || value.length !== keyIds.length) {
              throw new Error(`malformed usage: not ${keyIds.length} lists`);
            }
            return value.map(one);
          };
        });
      },
    };
    this.name = (store as { constructor?: { name?: unknown } }).constructor?.name as string ||
      "storage";
    const { appendAudit, readAudit, pruneAudit } = store;
    for (const [name, method] of Object.entries({ appendAudit, readAudit, pruneAudit })) {
      if (method !== undefined && typeof method !== "function") {
        throw new TypeError(`${label}.${name} must be a function`);
      }
    }
    this.audit = appendAudit === undefined || readAudit === undefined ? undefined : {
      append: (audit) =>
        this.#call("appendAudit", () => appendAudit.call(store, audit), (a) => a.readAuditRecord),
      read: (query) =>
        this.#call(
          "readAudit",
          () => readAudit.call(store, query),
          (a) => a.readAuditAnswer(query),
        ),
      prune: pruneAudit === undefined
        ? undefined
        : (tenantId, before) =>
          this.#call("pruneAudit", () =>
            pruneAudit.call(store, tenantId, before), (a) =>
            a.readCount),
    };
    this.notice = missing.length === 0
      ? undefined
      : `api-keys: the storage has no ${
        missing.join(", no ")
      }; optional ApiKeyStorage capabilities, see its documentation`;
    const peekByPrefix = store.peekByPrefix?.bind(store);
    if (peekByPrefix === undefined) {
      this.peek = undefined;
      return;
    }
    const checked = new WeakSet<object>([CHECKED]);
    this.peek = (prefix) => {
      let record: unknown;
      try {
        record = peekByPrefix(prefix) ?? null;
      } catch (error) {
        throw toStorageError("peekByPrefix", error);
      }
      if (!checked.has(record ?? CHECKED) && record !== null) {
        let read: ApiKeyRecord;
        try {
          read = (answers ?? notLoaded()).readApiKeyRecord(record);
        } catch (error) {
          throw toStorageError("peekByPrefix", error);
        }
        if (read !== record) return read.prefix === prefix ? read : null;
        checked.add(record as object);
      }
      // Found by its exact prefix only (see `readLookup`).
      return record === null || (record as ApiKeyRecord).prefix !== prefix
        ? null
        : record as Readonly<ApiKeyRecord>;
    };
  }

  /**
   * Resolves once the checks of the answers are loaded (started at
   * construction; a failed load rejects, and is tried again): await it before
   * `peek`, which refuses every record until then.
   */
  async loaded(): Promise<void> {
    await loadAnswers();
  }

  /** `findByPrefix`, read as a record or null. */
  findByPrefix(prefix: string): Promise<ApiKeyRecord | null> {
    return this.#call(
      "findByPrefix",
      () => this.#storage.findByPrefix(prefix),
      (a) => a.readLookup(prefix),
    );
  }

  /** `findById`, read as a record or null. */
  findById(id: string): Promise<ApiKeyRecord | null> {
    if (!mayBeStored(id)) return Promise.resolve(null);
    return this.#call("findById", () => this.#storage.findById(id), (a) => a.readRecordOrNull);
  }

  /**
   * `listByTenant`, each row read as a record of the tenant, once, revoked
   * only with `includeRevoked` (one malformed row fails the list).
   */
  listByTenant(tenantId: string, includeRevoked: boolean): Promise<ApiKeyRecord[]> {
    return this.#call(
      "listByTenant",
      () => this.#storage.listByTenant(tenantId, { includeRevoked }),
      (a) => a.readTenantRecords(tenantId, includeRevoked),
    );
  }

  /**
   * One page of a tenant's records (see `ApiKeyStorage.listPageByTenant`):
   * through the capability, checked; without it, every record of the tenant
   * from `listByTenant`, paged here.
   */
  async listPage(
    tenantId: string,
    options: ListApiKeyPageOptions,
  ): Promise<{ records: ApiKeyRecord[]; predecessors: Record<string, string> }> {
    const listPage = this.#listPage;
    const paging = await import("./_paging.ts"); // on use: ./api-keys/nest does not load it (issue 41)
    if (listPage === undefined) {
      return paging.pageOf(await this.listByTenant(tenantId, true), tenantId, options);
    }
    return await this.#call(
      "listPageByTenant",
      () => listPage(tenantId, options),
      (a) => a.readPage(paging, tenantId, options),
    );
  }

  /**
   * The record of `tenantId` that `keyId` replaced (see
   * `ApiKeyStorage.findByReplacement`), or null: through the capability,
   * checked; without it, from `listByTenant`.
   */
  async findByReplacement(tenantId: string, keyId: string): Promise<ApiKeyRecord | null> {
    if (!mayBeStored(keyId)) return null;
    const find = this.#findByReplacement;
    if (find === undefined) {
      const records = await this.listByTenant(tenantId, true);
      return records.find((record) => record.replacedByKeyId === keyId) ?? null;
    }
    return await this.#call(
      "findByReplacement",
      () => find(tenantId, keyId),
      (a) => a.readReplaced(tenantId, keyId),
    );
  }

  /**
   * The records of `tenantId` among `ids` (distinct, at most
   * `MAX_KEYS_PER_READ`; else a `TypeError`), a record or null per id in
   * their order (null: unknown or another tenant's): one `findManyByIds`,
   * checked; without it, `findById` per id.
   */
  async findManyByIds(tenantId: string, ids: readonly string[]): Promise<(ApiKeyRecord | null)[]> {
    assertKeyIds(ids);
    if (!ids.every(mayBeStored)) {
      const stored = await this.findManyByIds(tenantId, ids.filter(mayBeStored));
      return ids.map((id) => mayBeStored(id) ? stored.shift()! : null);
    }
    if (ids.length === 0) return [];
    const find = this.#findManyByIds;
    if (find === undefined) {
      const records = await Promise.all(ids.map((id) => this.findById(id)));
      return records.map((record) => record?.tenantId === tenantId ? record : null);
    }
    return await this.#call(
      "findManyByIds",
      () => find(tenantId, [...ids]),
      (a) => a.readRecordsOfIds(tenantId, ids),
    );
  }

  /**
   * `insert` (with `audit`, appended in the same step). Past the deadline it rejects, and `late`
   * hears of the write (see `withDeadline`).
   */
  insert(record: ApiKeyRecord, audit?: AuditAppend, late?: Late<void>): Promise<void> {
    return this.#call(
      "insert",
      () => this.#storage.insert(record, ...this.#with(audit)),
      ignore,
      late,
    );
  }

  /**
   * `rotate` (with `audit`, appended in the same step), answering `"rotated"`,
   * or nothing from a storage written for the spec. Past the deadline it rejects, and `late`
   * hears of the write (a late `not_rotatable`: nothing landed, nothing heard).
   */
  rotate(
    input: RotateApiKeyStorageInput,
    audit?: AuditAppend,
    late?: Late<"rotated" | undefined>,
  ): Promise<"rotated" | undefined> {
    return this.#call(
      "rotate",
      () => this.#storage.rotate(input, ...this.#with(audit)),
      (a) => a.readRotateAnswer,
      late,
    );
  }

  /** The trailing `audit` argument of a change: none without the capability or a record. */
  #with(audit: AuditAppend | undefined): [] | [AuditAppend] {
    return audit === undefined || this.audit === undefined ? [] : [audit];
  }

  /**
   * Writes `revokedAt`: through `markRevokedIfActive` when the storage has it,
   * answering whether this call revoked the key; else `markRevoked`, always
   * `true`. Past the deadline it rejects, and `late` hears of the write (see
   * `withDeadline`).
   */
  revoke(id: string, at: Date, audit?: AuditAppend, late?: Late<boolean>): Promise<boolean> {
    const markRevokedIfActive = this.#markRevokedIfActive;
    if (markRevokedIfActive === undefined) {
      return this.#call(
        "markRevoked",
        () => this.#storage.markRevoked(id, at),
        () => () => true,
        late,
      );
    }
    return this.#call(
      "markRevokedIfActive",
      () => markRevokedIfActive(id, at, ...this.#with(audit)),
      (a) => a.readBoolean,
      late,
    );
  }

  /**
   * `rotate` of a record of `tenantId`: through `rotateForTenant` when the
   * storage has it, else `rotate` (the caller checked the tenant on a read);
   * answered as `rotate`.
   */
  rotateForTenant(
    tenantId: string,
    input: RotateApiKeyStorageInput,
    audit?: AuditAppend,
    late?: Late<"rotated" | undefined>,
  ): Promise<"rotated" | undefined> {
    const forTenant = this.#forTenant;
    if (forTenant === undefined) return this.rotate(input, audit, late);
    return this.#call(
      "rotateForTenant",
      () => forTenant.rotateForTenant(tenantId, input, ...this.#with(audit)),
      (a) => a.readRotateAnswer,
      late,
    );
  }

  /**
   * `revoke` of a record of `tenantId`: through `markRevokedForTenant` when
   * the storage has it, else `revoke` (the caller checked the tenant on a read).
   */
  revokeForTenant(
    tenantId: string,
    id: string,
    at: Date,
    audit?: AuditAppend,
    late?: Late<boolean>,
  ): Promise<boolean> {
    const forTenant = this.#forTenant;
    if (forTenant === undefined) return this.revoke(id, at, audit, late);
    return this.#call(
      "markRevokedForTenant",
      () => forTenant.markRevokedForTenant(tenantId, id, at, ...this.#with(audit)),
      (a) => a.readBoolean,
      late,
    );
  }

  /** Whether the storage has `markRevokedIfActive` (a revoke tells whether it changed the key). */
  get revokesOnce(): boolean {
    return this.#markRevokedIfActive !== undefined;
  }

  /** Whether the storage has the `replaceHash` capability. */
  get canReplaceHash(): boolean {
    return this.#replaceHash !== undefined;
  }

  /** `replaceHash` (the capability; rejects without it), answering whether it replaced the hash. */
  replaceHash(id: string, expectedHash: string, next: ApiKeyHashReplacement): Promise<boolean> {
    const replaceHash = this.#replaceHash;
    if (replaceHash === undefined) {
      return Promise.reject(toStorageError("replaceHash", new Error("not supported")));
    }
    return this.#call(
      "replaceHash",
      () => replaceHash(id, expectedHash, next),
      (a) => a.readBoolean,
    );
  }

  /**
   * `ready` (the capability; nothing without it) within the deadline: its `TypeError` (the
   * storage misconfigured) rejects as it is; any other failure, or no answer by the deadline (a
   * storage down at start-up, whose calls fail as they do any time), resolves to the line to log
   * (its error's name only: a driver's message may hold a connection string).
   */
  async ready(): Promise<string | undefined> {
    const ready = this.#ready;
    if (ready === undefined) return undefined;
    try {
      await this.withDeadline("storage", ready);
      return undefined;
    } catch (error) {
      if (error instanceof TypeError) throw error;
      return `api-keys: ${this.name}.ready() did not answer at start-up (${errorNameOf(error)}): ` +
        "not checked; its calls fail as storage errors until it answers";
    }
  }

  /** Whether the storage has the `countHashes` capability. */
  get canCountHashes(): boolean {
    return this.#countHashes !== undefined;
  }

  /** `countHashes` (the capability; rejects without it), rows checked and merged. */
  countHashes(now: Date): Promise<ApiKeyHashCount[]> {
    const countHashes = this.#countHashes;
    if (countHashes === undefined) {
      return Promise.reject(toStorageError("countHashes", new Error("not supported")));
    }
    return this.#call("countHashes", () => countHashes(now), (a) => a.readHashCounts);
  }

  /**
   * `touchLastUsed(id, at())`, not awaited: a throw or a rejection (of the
   * storage or of `at`) never reaches the caller and is warned about once; a
   * slow write that succeeds is no failure. `settled` (the telemetry bridge's
   * span end) learns how it settled, as failed (`"timeout"`) at the storage
   * deadline at the latest.
   */
  touchLastUsed(id: string, at: () => Date, settled?: Settled): void {
    const storage = this.#storage;
    if (settled === undefined) {
      return callDetached(() => storage.touchLastUsed(id, at()), [], this.#touchFailed);
    }
    let done = false;
    const settle = (errorType?: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      settled(errorType);
    };
    const timer = setTimeout(() => settle("timeout"), this.#timeoutMs);
    callDetached(
      async () => {
        await storage.touchLastUsed(id, at());
        settle();
      },
      [],
      (error) => {
        settle(errorNameOf(error));
        this.#touchFailed(error);
      },
    );
  }

  /**
   * Runs `call` under the storage deadline, rejecting with `Error(<what>
   * deadline exceeded)` past it; a synchronous throw is a rejection. The
   * deadline does not cancel the call: `late.pending` gets, at the deadline,
   * its settling, and `late.answer` the value of one that resolves after the
   * deadline rejected (its throw is warned about once, a late rejection
   * dropped).
   */
  async withDeadline<T>(
    what: string,
    call: () => T | Promise<T>,
    late?: Late<T>,
  ): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let expired = false;
    let settled: Promise<void> | undefined;
    try {
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          expired = true;
          if (settled !== undefined && late?.pending !== undefined) {
            callDetached(late.pending, [settled], this.#lateFailed);
          }
          reject(new DeadlineExceeded(`${what} deadline exceeded`));
        }, this.#timeoutMs);
      });
      const pending = call();
      if (late !== undefined) {
        settled = Promise.resolve(pending).then(
          (value) => void (expired && callDetached(late.answer, [value], this.#lateFailed)),
          () => {},
        );
      }
      return await Promise.race([pending, deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Runs `call` under the deadline and reads its answer; any failure is an
   * `ApiKeyStorageError`. `late` hears of a call still pending at the
   * deadline, its answer read (see `withDeadline`).
   */
  async #call<T>(
    operation: string,
    call: () => unknown,
    read: Reader<T>,
    late?: Late<T>,
  ): Promise<T> {
    try {
      const reader = read(answers ?? await loadAnswers()); // before the call: a failed load writes nothing
      const lateRead = late && {
        answer: (value: unknown) => {
          let read: T;
          try {
            read = reader(value);
          } catch (error) {
            // The storage refused it (another rotation won): nothing landed, nothing to do.
            if (error instanceof ApiKeyOperationError) return;
            throw error;
          }
          late.answer(read);
        },
        pending: late.pending,
      };
      return reader(await this.withDeadline("storage", call, lateRead));
    } catch (error) {
      throw toStorageError(operation, error);
    }
  }
}
