/**
 * How `ApiKeysService` reaches its storage: every call under a deadline with
 * failures mapped to `ApiKeyStorageError`, and the synchronous lookup of an
 * unmodified `InMemoryApiKeyStorage`.
 *
 * @module
 */
import { ApiKeyOperationError, ApiKeyStorageError } from "./errors.ts";
import { InMemoryApiKeyStorage, PEEK_BY_PREFIX } from "./in_memory_storage.ts";
import { readApiKeyRecord } from "./record.ts";
import type { ApiKeyStorage } from "./storage.ts";
import type { ApiKeyRecord } from "./types.ts";

/** A synchronous prefix lookup that returns the stored record itself (no copy). */
export type SyncPrefixLookup = (prefix: string) => Readonly<ApiKeyRecord> | null;

/**
 * The synchronous prefix lookup of an unmodified `InMemoryApiKeyStorage`: it
 * cannot hang or fail, so verify skips the deadline and the copy.
 */
export function syncLookupOf(storage: ApiKeyStorage): SyncPrefixLookup | undefined {
  if (
    !(storage instanceof InMemoryApiKeyStorage) ||
    storage.findByPrefix !== InMemoryApiKeyStorage.prototype.findByPrefix
  ) return undefined;
  return (prefix) => storage[PEEK_BY_PREFIX](prefix);
}

function toStorageError(operation: string, error: unknown): Error {
  if (error instanceof ApiKeyOperationError || error instanceof ApiKeyStorageError) return error;
  return new ApiKeyStorageError(operation, error);
}

/**
 * Runs one storage call under a deadline of `timeoutMs`; any failure other
 * than an `ApiKeyOperationError` becomes an `ApiKeyStorageError` (cause kept
 * private). With `expectRecord`, the result must be a well-formed record (read
 * by `readApiKeyRecord`) or null.
 */
export function callStorage<T>(
  operation: string,
  timeoutMs: number,
  call: () => Promise<T>,
  expectRecord?: false,
): Promise<T>;
/** Runs one record lookup under the deadline; the result is null or read by `readApiKeyRecord`. */
export function callStorage(
  operation: string,
  timeoutMs: number,
  call: () => Promise<ApiKeyRecord | null>,
  expectRecord: true,
): Promise<ApiKeyRecord | null>;
export async function callStorage<T>(
  operation: string,
  timeoutMs: number,
  call: () => Promise<T>,
  expectRecord = false,
): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new ApiKeyStorageError(operation, new Error("storage deadline exceeded"))),
        timeoutMs,
      );
    });
    const result = await Promise.race([call(), deadline]);
    if (!expectRecord || result === null) return result;
    const record = readApiKeyRecord(result);
    if (record === null) throw new ApiKeyStorageError(operation, new Error("malformed record"));
    return record as T;
  } catch (error) {
    throw toStorageError(operation, error);
  } finally {
    clearTimeout(timer);
  }
}
