/**
 * Legacy hashes in `ApiKeysService`: the upgrade on use (a record verified on
 * a legacy hash scheme or an older pepper version is re-hashed with the current
 * ones through the storage's `replaceHash`, off the request's path), the
 * hash report, and the retirement check of `ready()`.
 *
 * @module
 */
import type { ApiKeyEvent } from "../events.ts";
import { CURRENT_HASH_SCHEME, type WebCryptoSha256Hasher } from "../hasher.ts";
import type { Dispatch } from "../_sinks.ts";
import type { StorageAccess } from "../storage/_access.ts";
import type { ApiKeyHashReport, ApiKeyRecord } from "../types.ts";

/** What the hash report and the start check read of the service's settings. */
interface HashSettings {
  readonly clock: () => Date;
  readonly storage: StorageAccess;
  readonly hasher: WebCryptoSha256Hasher;
  readonly retiredPepperVersions: readonly number[] | undefined;
}

/**
 * Whether a record on `hashScheme` (absent: `hmac-sha256`) and `pepperVersion`
 * is upgraded on use by a service whose current version is `current`: on a
 * legacy scheme, or on an older version. A later version is left alone (an
 * instance still on the older one during a rolling rotation, never a downgrade).
 */
export function needsUpgrade(
  hashScheme: ApiKeyRecord["hashScheme"],
  pepperVersion: number,
  current: number,
): boolean {
  return (hashScheme ?? CURRENT_HASH_SCHEME) !== CURRENT_HASH_SCHEME || pepperVersion < current;
}

/**
 * Whether `retiredPepperVersions` (`retired`; undefined: not set) retires a
 * record on `hashScheme` and `pepperVersion`: a listed version, or `sha256`
 * whenever the option is set. Start refuses such usable records, an import
 * refuses them, and verify treats them as on an unconfigured version.
 */
export function isRetired(
  retired: readonly number[] | undefined,
  hashScheme: ApiKeyRecord["hashScheme"],
  pepperVersion: number,
): boolean {
  return retired !== undefined && (hashScheme === "sha256" || retired.includes(pepperVersion));
}

/** Most records whose upgrade is remembered as attempted (the oldest is forgotten first). */
const MAX_ATTEMPTS_REMEMBERED = 100_000;

/**
 * Upgrades records on use. `afterVerified` is called by the verify flow once
 * a record's secret is proven and the key is usable; it only decides and
 * schedules: the re-hash and the `replaceHash` compare-and-set run after the
 * verification has returned, are never awaited by it, and are tried at most
 * once per record per instance (concurrent verifications of one record
 * start one upgrade). A failure emits `api_key.rehash_failed`; a hash that
 * changed underneath (`replaceHash` answering `false`) is read again: one that
 * still needs an upgrade and that the secret verifies (another instance's, on
 * an older current version) is upgraded from, once; any other is left alone.
 */
export class HashUpgrade {
  readonly #hasher: WebCryptoSha256Hasher;
  readonly #storage: StorageAccess;
  readonly #emitEvent: Dispatch<ApiKeyEvent> | undefined;
  readonly #clock: () => Date;
  readonly #attempted = new Set<string>();

  /** Upgrades through `storage` (which has `replaceHash`) to `hasher`'s current version. */
  constructor(
    hasher: WebCryptoSha256Hasher,
    storage: StorageAccess,
    emitEvent: Dispatch<ApiKeyEvent> | undefined,
    clock: () => Date,
  ) {
    this.#hasher = hasher;
    this.#storage = storage;
    this.#emitEvent = emitEvent;
    this.#clock = clock;
  }

  /** Schedules the upgrade of `record`, verified with `secret`, when it needs one. */
  afterVerified(record: Readonly<ApiKeyRecord>, secret: string): void {
    const hashScheme = record.hashScheme ?? CURRENT_HASH_SCHEME;
    const { id, pepperVersion } = record;
    if (!needsUpgrade(hashScheme, pepperVersion, this.#hasher.currentVersion)) return;
    const attempted = this.#attempted;
    if (attempted.has(id)) return;
    if (attempted.size >= MAX_ATTEMPTS_REMEMBERED) {
      attempted.delete(attempted.values().next().value!);
    }
    attempted.add(id);
    // A copy: the record may be a stored object that the upgrade itself changes.
    const before = { ...record, hashScheme };
    Promise.resolve().then(() => this.#upgrade(before, secret)).catch(() => {});
  }

  async #upgrade(
    record: Readonly<ApiKeyRecord> & { hashScheme: ApiKeyRecord["hashScheme"] & string },
    secret: string,
    again = true,
  ): Promise<void> {
    try {
      const next = await this.#hasher.hash(secret);
      const replaced = await this.#storage.replaceHash(record.id, record.hash, {
        hash: next.hash,
        hashScheme: CURRENT_HASH_SCHEME,
        pepperVersion: next.pepperVersion,
      });
      if (replaced || !again) return;
      // Written first elsewhere: an instance whose current version is older (a rolling deploy)
      // leaves a hash in between, from which this one upgrades, once, the secret proven on it.
      const fresh = await this.#storage.findById(record.id);
      if (fresh === null || fresh.hash === record.hash) return;
      const scheme = fresh.hashScheme ?? CURRENT_HASH_SCHEME;
      if (!needsUpgrade(scheme, fresh.pepperVersion, this.#hasher.currentVersion)) return;
      if (!await this.#hasher.verify(secret, fresh.hash, fresh.pepperVersion, scheme)) return;
      await this.#upgrade({ ...fresh, hashScheme: scheme }, secret, false);
    } catch {
      // A throwing clock rejects this detached promise, which is dropped.
      this.#emitEvent?.({
        type: "api_key.rehash_failed",
        at: this.#clock(),
        keyId: record.id,
        tenantId: record.tenantId,
        prefix: record.prefix,
        environment: record.environment,
        hashScheme: record.hashScheme,
        pepperVersion: record.pepperVersion,
      });
    }
  }
}

/**
 * Validates `retiredPepperVersions` (undefined, or an array of positive
 * integers without the current version) for a storage that can count
 * hashes; a `TypeError` names `label`.
 */
export function validateRetiredVersions(
  value: unknown,
  currentVersion: number,
  canCount: boolean,
  label: string,
): readonly number[] | undefined {
  if (value === undefined) return undefined;
  if (
    !Array.isArray(value) ||
    !value.every((version) => Number.isSafeInteger(version) && version > 0)
  ) {
    throw new TypeError(`${label} must be an array of positive integers`);
  }
  if (value.includes(currentVersion)) {
    throw new TypeError(`${label} must not include the current pepper version ${currentVersion}`);
  }
  if (!canCount) {
    throw new TypeError(`${label} needs the storage capability countHashes (see ApiKeyStorage)`);
  }
  return Object.freeze([...value]);
}

/**
 * The hash report of `ApiKeysService.hashReport` (see `ApiKeyHashReport`):
 * rejects with `ApiKeyStorageError` when the storage fails or has no
 * `countHashes`.
 */
export async function hashReport(s: HashSettings): Promise<ApiKeyHashReport> {
  const at = s.clock();
  const counts = await s.storage.countHashes(at);
  const current = s.hasher.currentVersion;
  let usable = 0;
  let toUpgrade = 0;
  for (const { hashScheme, pepperVersion, count } of counts) {
    usable += count;
    if (needsUpgrade(hashScheme, pepperVersion, current)) toUpgrade += count;
  }
  return { at: new Date(at.getTime()), currentPepperVersion: current, counts, usable, toUpgrade };
}

/**
 * The start check of `ApiKeysService.ready` (see there): with
 * `retiredPepperVersions`, rejects while usable records remain on a retired
 * version or on `sha256`, naming the counts; a storage failure rejects too.
 */
export async function checkReady(s: HashSettings): Promise<void> {
  const retired = s.retiredPepperVersions;
  if (retired === undefined) return;
  const report = await hashReport(s);
  const stranded = report.counts.filter(({ hashScheme, pepperVersion }) =>
    isRetired(retired, hashScheme, pepperVersion)
  );
  if (stranded.length === 0) return;
  const total = stranded.reduce((sum, { count }) => sum + count, 0);
  const detail = stranded.map(({ hashScheme, pepperVersion, count }) =>
    `${count} on ${hashScheme === "sha256" ? "sha256" : `pepper version ${pepperVersion}`}` +
    (hashScheme === "sha256" || hashScheme === CURRENT_HASH_SCHEME ? "" : ` (${hashScheme})`)
  ).join(", ");
  throw new Error(
    `api-keys: refusing to start: ${total} usable API key${total === 1 ? "" : "s"} ` +
      `${total === 1 ? "still needs" : "still need"} a retired hash (${detail}); they are ` +
      "upgraded on use, or rotate or revoke them, then start again (docs/operations.md, " +
      '"Retiring a version")',
  );
}
