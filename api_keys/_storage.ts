/**
 * The storage wrapper of `ApiKeysService`, the one way both flows reach the
 * storage: each call runs under the deadline with failures mapped to
 * `ApiKeyStorageError`; every record read is validated here and nowhere else;
 * the capabilities (optional methods of `ApiKeyStorage`) are detected once,
 * at construction. Over 300 lines because it wraps every storage operation
 * and capability in one place, each with its deadline and error mapping.
 *
 * @module
 */
import { ApiKeyOperationError, ApiKeyStorageError } from "./errors.ts";
import { API_KEY_HASH_SCHEMES, CURRENT_HASH_SCHEME } from "./hasher.ts";
import { callDetached, warnOnce } from "./_sinks.ts";
import { API_KEY_STORAGE_METHODS, type ApiKeyStorage } from "./storage.ts";
import type {
  ApiKeyHashCount,
  ApiKeyHashReplacement,
  ApiKeyRecord,
  RotateApiKeyStorageInput,
} from "./types.ts";

/** Each capability and what the service does without it (see `ApiKeyStorage`). */
const CAPABILITIES: Readonly<
  Record<Exclude<keyof ApiKeyStorage, (typeof API_KEY_STORAGE_METHODS)[number]>, string>
> = Object.freeze({
  peekByPrefix:
    "each verify awaits findByPrefix, and the verification cache is off unless the cache or feed option is set",
  markRevokedIfActive: "concurrent revoke() calls of one key may each emit api_key.revoked",
  replaceHash: "records on a legacy hash scheme or an old pepper version are not upgraded on use",
  countHashes: "hashReport() and retiredPepperVersions are unavailable",
});

function isInvalidDate(value: unknown): value is Date {
  return value instanceof Date && Number.isNaN(value.getTime());
}

/**
 * A stored `expiresAt` as the service reads it, copied: a `Date` that is not a
 * valid date (a bad row, or one written by an older version) counts as
 * expired, read as the epoch, 1970-01-01T00:00:00.000Z. In-process storages
 * store it so read (their records are checked once, not on every peek).
 *
 * @example
 * ```ts
 * import { readExpiresAt } from "./_storage.ts";
 * readExpiresAt(new Date(Number.NaN))?.getTime(); // 0
 * readExpiresAt(null); // null
 * ```
 */
export function readExpiresAt(expiresAt: Date | null): Date | null {
  if (expiresAt === null) return null;
  const ms = expiresAt.getTime();
  return new Date(Number.isNaN(ms) ? 0 : ms);
}

function isDateOrNull(value: unknown): boolean {
  return value === null || (value instanceof Date && !Number.isNaN(value.getTime()));
}

function isStringArray(value: unknown): boolean {
  return Array.isArray(value) && value.every((item) => typeof item === "string");
}

/** Whether `value` has the shape of an `ApiKeyRecord` (every field of the right type, dates valid). */
function isApiKeyRecord(value: unknown): value is ApiKeyRecord {
  if (typeof value !== "object" || value === null) return false;
  const r = value as Record<string, unknown>;
  return typeof r.id === "string" && typeof r.tenantId === "string" &&
    typeof r.name === "string" && (r.environment === "live" || r.environment === "test") &&
    typeof r.prefix === "string" && typeof r.hash === "string" &&
    (r.hashScheme === undefined || API_KEY_HASH_SCHEMES.includes(r.hashScheme as never)) &&
    Number.isSafeInteger(r.pepperVersion) && isStringArray(r.scopes) &&
    (r.allowedIpCidrs === undefined || isStringArray(r.allowedIpCidrs)) &&
    isDateOrNull(r.lastUsedAt) && isDateOrNull(r.expiresAt) && isDateOrNull(r.revokedAt) &&
    isDateOrNull(r.rotatedAt) &&
    (r.replacedByKeyId === null || typeof r.replacedByKeyId === "string") &&
    (r.createdBy === null || typeof r.createdBy === "string") &&
    r.createdAt instanceof Date && !Number.isNaN(r.createdAt.getTime());
}

/**
 * A stored value as the service reads it: the record when it has the shape of
 * an `ApiKeyRecord` once an `expiresAt` that is not a valid date is read as
 * expired (the epoch, 1970-01-01T00:00:00.000Z; the result is then a shallow
 * copy), else `null`.
 *
 * @example
 * ```ts
 * import { readApiKeyRecord } from "./_storage.ts";
 * readApiKeyRecord({ id: "k1" }); // null
 * ```
 */
export function readApiKeyRecord(value: unknown): ApiKeyRecord | null {
  if (typeof value !== "object" || value === null) return null;
  const { expiresAt } = value as { expiresAt?: unknown };
  const record = isInvalidDate(expiresAt)
    ? { ...value, expiresAt: readExpiresAt(expiresAt) }
    : value;
  return isApiKeyRecord(record) ? record : null;
}

function malformed(): Error {
  return new Error("malformed record");
}

function readRecordOrNull(value: unknown): ApiKeyRecord | null {
  if (value === null) return null;
  const record = readApiKeyRecord(value);
  if (record === null) throw malformed();
  return record;
}

function readRecords(value: unknown): ApiKeyRecord[] {
  if (!Array.isArray(value)) throw malformed();
  return value.map((row) => {
    const record = readApiKeyRecord(row);
    if (record === null) throw malformed();
    return record;
  });
}

function readBoolean(value: unknown): boolean {
  if (typeof value !== "boolean") throw new Error("answer is not a boolean");
  return value;
}

/**
 * Rows of `countHashes` checked and merged: one per scheme and version,
 * the current scheme first, versions ascending.
 */
function readHashCounts(value: unknown): ApiKeyHashCount[] {
  if (!Array.isArray(value)) throw malformed();
  const merged = new Map<string, ApiKeyHashCount>();
  for (const row of value) {
    const { hashScheme = CURRENT_HASH_SCHEME, pepperVersion, count } = row ?? {};
    if (
      !API_KEY_HASH_SCHEMES.includes(hashScheme) || !Number.isSafeInteger(pepperVersion) ||
      !Number.isSafeInteger(count) || count < 0
    ) {
      throw malformed();
    }
    const key = `${hashScheme} ${pepperVersion}`;
    const seen = merged.get(key);
    if (seen !== undefined) seen.count += count;
    else if (count > 0) merged.set(key, { hashScheme, pepperVersion, count });
  }
  return [...merged.values()].sort((a, b) =>
    API_KEY_HASH_SCHEMES.indexOf(a.hashScheme) - API_KEY_HASH_SCHEMES.indexOf(b.hashScheme) ||
    a.pepperVersion - b.pepperVersion
  );
}

const ignore = (): void => {};

/** The error a failed storage call rejects with: the one way `ApiKeyStorageError`s are built. */
function toStorageError(operation: string, error: unknown): Error {
  if (error instanceof ApiKeyOperationError || error instanceof ApiKeyStorageError) return error;
  return new ApiKeyStorageError(operation, error);
}

/** The stand-in looked up among the checked records when a prefix is unknown. */
const CHECKED = Object.freeze({});

/**
 * The storage as both flows use it (see the module documentation). Built once
 * per service from the `storage` option, which it validates.
 *
 * @example
 * ```ts
 * import { StorageAccess } from "./_storage.ts";
 * import { InMemoryApiKeyStorage } from "./in_memory_storage.ts";
 * const storage = new StorageAccess(new InMemoryApiKeyStorage(), 5_000, "storage");
 * storage.notice; // undefined: the in-memory storage has every capability
 * await storage.findById("k1"); // null
 * ```
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
  readonly #storage: ApiKeyStorage;
  readonly #timeoutMs: number;
  readonly #markRevokedIfActive: ((id: string, at: Date) => Promise<boolean>) | undefined;
  readonly #replaceHash:
    | ((id: string, expectedHash: string, next: ApiKeyHashReplacement) => Promise<boolean>)
    | undefined;
  readonly #countHashes: ((now: Date) => Promise<ApiKeyHashCount[]>) | undefined;
  readonly #touchFailed = warnOnce("touchLastUsed");

  /**
   * Checks `storage` (a `TypeError` naming `label` when a required method is
   * missing or a capability is not a function) and detects its capabilities.
   */
  constructor(storage: unknown, timeoutMs: number, label: string) {
    if (typeof storage !== "object" || storage === null) {
      throw new TypeError(`${label} is required`);
    }
    const methods = storage as Record<string, unknown>;
    for (const method of API_KEY_STORAGE_METHODS) {
      if (typeof methods[method] !== "function") {
        throw new TypeError(`${label} is missing method ${method}`);
      }
    }
    const missing: string[] = [];
    for (const [capability, without] of Object.entries(CAPABILITIES)) {
      const method = methods[capability];
      if (method === undefined) missing.push(`${capability} (${without})`);
      else if (typeof method !== "function") {
        throw new TypeError(`${label}.${capability} must be a function`);
      }
    }
    const store = storage as ApiKeyStorage;
    this.#storage = store;
    this.#timeoutMs = timeoutMs;
    this.#markRevokedIfActive = store.markRevokedIfActive?.bind(store);
    this.#replaceHash = store.replaceHash?.bind(store);
    this.#countHashes = store.countHashes?.bind(store);
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
        const read = readApiKeyRecord(record);
        if (read === null) throw toStorageError("peekByPrefix", malformed());
        if (read !== record) return read;
        checked.add(record as object);
      }
      return record as Readonly<ApiKeyRecord> | null;
    };
  }

  /** `findByPrefix`, read as a record or null. */
  findByPrefix(prefix: string): Promise<ApiKeyRecord | null> {
    return this.#call("findByPrefix", () => this.#storage.findByPrefix(prefix), readRecordOrNull);
  }

  /** `findById`, read as a record or null. */
  findById(id: string): Promise<ApiKeyRecord | null> {
    return this.#call("findById", () => this.#storage.findById(id), readRecordOrNull);
  }

  /** `listByTenant`, each row read as a record (one malformed row fails the list). */
  listByTenant(tenantId: string, includeRevoked: boolean): Promise<ApiKeyRecord[]> {
    return this.#call(
      "listByTenant",
      () => this.#storage.listByTenant(tenantId, { includeRevoked }),
      readRecords,
    );
  }

  /** `insert`. */
  insert(record: ApiKeyRecord): Promise<void> {
    return this.#call("insert", () => this.#storage.insert(record), ignore);
  }

  /** `rotate`. */
  rotate(input: RotateApiKeyStorageInput): Promise<void> {
    return this.#call("rotate", () => this.#storage.rotate(input), ignore);
  }

  /**
   * Writes `revokedAt`: through `markRevokedIfActive` when the storage has it,
   * answering whether this call revoked the key; else `markRevoked`, always `true`.
   */
  revoke(id: string, at: Date): Promise<boolean> {
    const markRevokedIfActive = this.#markRevokedIfActive;
    if (markRevokedIfActive === undefined) {
      return this.#call("markRevoked", () => this.#storage.markRevoked(id, at), () => true);
    }
    return this.#call("markRevokedIfActive", () => markRevokedIfActive(id, at), readBoolean);
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
    return this.#call("replaceHash", () => replaceHash(id, expectedHash, next), readBoolean);
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
    return this.#call("countHashes", () => countHashes(now), readHashCounts);
  }

  /**
   * `touchLastUsed(id, at())`, not awaited: a throw or rejection (of the
   * storage or of `at`) never reaches the caller and is warned about once.
   */
  touchLastUsed(id: string, at: () => Date): void {
    const storage = this.#storage;
    callDetached(() => storage.touchLastUsed(id, at()), [], this.#touchFailed);
  }

  /** Runs `call` under the deadline and reads its answer; any failure is an `ApiKeyStorageError`. */
  async #call<T>(operation: string, call: () => unknown, read: (value: unknown) => T): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error("storage deadline exceeded")), this.#timeoutMs);
      });
      return read(await Promise.race([call(), deadline]));
    } catch (error) {
      throw toStorageError(operation, error);
    } finally {
      clearTimeout(timer);
    }
  }
}
