/**
 * The import of `ApiKeysService.importKeys`: records of another system
 * validated one by one, inserted when their prefix is free; when it already
 * holds the same key, skipped (so a re-run changes nothing), revoked when the
 * record was revoked since, a conflict naming the fields when the record
 * differs otherwise; reported per record in any other case. Nothing is
 * hashed: the foreign hash is stored as it is, on its scheme, and upgraded on
 * use. So an import needs the pepper versions, never the peppers:
 * `keyImporter` imports with nothing more (the CLI `deno task import-keys`).
 *
 * @module
 */
import { isoInstantMs } from "../client/_instant.ts";
import { ApiKeyValidationError } from "./errors.ts";
import { createdEvent } from "./events.ts";
import { createdChanges } from "./audit/_log.ts";
import type { AuditContext } from "./audit/types.ts";
import {
  API_KEY_HASH_SCHEMES,
  CURRENT_HASH_SCHEME,
  isWellFormedHash,
  type WebCryptoSha256Hasher,
} from "./hasher.ts";
import { fail, failTime, instantProblem, keyIdProblem, requireObjectOf } from "./_input.ts";
import { validateCreateInput } from "./_key_input.ts";
import { newRecordId } from "./_uuid_v7.ts";
import { isRetired } from "./verify/_legacy.ts";
import { compileKeyLayouts, type LegacyKeyLayout } from "./key_format.ts";
import { DEFAULT_STORAGE_TIMEOUT_MS, type Settings } from "./_settings.ts";
import { StorageAccess } from "./storage/_access.ts";
import type { ApiKeyStorage } from "./storage/types.ts";
import type {
  ApiKeyHashScheme,
  ApiKeyRecord,
  ImportApiKeyRecord,
  ImportApiKeysOptions,
  ImportApiKeysResult,
  Scope,
} from "./types.ts";

/**
 * What an import works with: the service's settings, or `keyImporter`'s. Of
 * the hasher only `hasVersion`: an import never hashes.
 */
export type ImportSettings =
  & Pick<
    Settings,
    | "layouts"
    | "storage"
    | "clock"
    | "idFactory"
    | "audit"
    | "fleet"
    | "emitEvent"
    | "retiredPepperVersions"
  >
  & { readonly hasher: Pick<WebCryptoSha256Hasher, "hasVersion"> };

/**
 * A date field: a valid `Date`, or an ISO 8601 (RFC 3339) string read by
 * `isoInstantMs` (a date alone is UTC midnight; a date-time carries its
 * zone, never read in the machine's), within range; `null`/absent as `null`.
 */
function dateOf(value: unknown, field: string): Date | null {
  if (value === undefined || value === null) return null;
  const ms = value instanceof Date ? value.getTime() : isoInstantMs(value, true);
  if (Number.isNaN(ms)) {
    failTime(
      field,
      "must be a valid Date, an ISO 8601 date (2030-01-31, UTC) or date-time with its offset " +
        "(2030-01-31T12:00:00Z), or null",
    );
  }
  const problem = instantProblem(ms);
  if (problem !== undefined) failTime(field, problem);
  return new Date(ms);
}

/**
 * `resource:level` strings as `Scope` objects (objects pass through for
 * validation); a string without a colon is refused, never echoed.
 */
function scopesOf(value: unknown): Scope[] {
  if (!Array.isArray(value)) return value as Scope[];
  return value.map((scope, i) => {
    if (typeof scope !== "string") return scope;
    const colon = scope.lastIndexOf(":");
    if (colon < 0) fail("scopes", `scopes[${i}] must be a "resource:level" string`);
    return { resource: scope.slice(0, colon), level: scope.slice(colon + 1) } as Scope;
  });
}

/**
 * The layout of an imported key (see `ImportApiKeyRecord.layout`): a legacy
 * layout's name, or `undefined` for the current layout.
 */
function layoutOf(s: ImportSettings, value: unknown): string | undefined {
  const { legacy } = s.layouts;
  if (value === null) return undefined;
  if (value === undefined) {
    if (legacy.length > 1) {
      fail("layout", "must name one of the service's legacyKeyLayouts, or be null (current)");
    }
    return legacy[0]?.name;
  }
  if (typeof value !== "string" || s.layouts.legacyNamed(value) === undefined) {
    fail("layout", "must name one of the service's legacyKeyLayouts, or be null (current)");
  }
  return value;
}

/**
 * The fields of an `ImportApiKeyRecord`: a record with any other is refused (an
 * export's `revoked_at` or `allowedIps` unread would import a live, unrestricted key).
 */
const IMPORT_FIELDS: readonly (keyof ImportApiKeyRecord)[] = [
  "id",
  "tenantId",
  "name",
  "environment",
  "prefix",
  "hash",
  "hashScheme",
  "pepperVersion",
  "layout",
  "scopes",
  "allowedIpCidrs",
  "expiresAt",
  "revokedAt",
  "rotatedAt",
  "replacedByKeyId",
  "lastUsedAt",
  "createdBy",
  "createdAt",
];

/** Validates one foreign record of `importKeys` into the record to insert (without its id). */
function validateImport(
  s: ImportSettings,
  input: unknown,
): Omit<ApiKeyRecord, "id"> & { id?: string } {
  requireObjectOf(input, IMPORT_FIELDS, "record");
  const r = input as Partial<Record<keyof ImportApiKeyRecord, unknown>>;
  if (!s.layouts.acceptsPrefix(r.prefix as string)) {
    fail("prefix", "must be the prefix of a key of an accepted layout (its length and alphabet)");
  }
  const hashScheme = r.hashScheme as ApiKeyHashScheme;
  if (!API_KEY_HASH_SCHEMES.includes(hashScheme)) {
    fail("hashScheme", `must be one of ${API_KEY_HASH_SCHEMES.join(", ")}`);
  }
  if (hashScheme !== CURRENT_HASH_SCHEME && s.layouts.legacy.length === 0) {
    fail("hashScheme", `${hashScheme} needs the service's legacyKeyLayouts (the keys' layout)`);
  }
  const hash = hashScheme === CURRENT_HASH_SCHEME || typeof r.hash !== "string"
    ? r.hash
    : r.hash.toLowerCase();
  if (typeof hash !== "string" || !isWellFormedHash(hashScheme, hash)) {
    fail("hash", `is not a ${hashScheme} hash`);
  }
  const pepperVersion = r.pepperVersion as number;
  if (hashScheme === "sha256" ? pepperVersion !== 0 : !s.hasher.hasVersion(pepperVersion)) {
    // The version is shown only when it is a number: a key misplaced in the field is not.
    const unknown = Number.isSafeInteger(pepperVersion)
      ? `pepper version ${pepperVersion} is not configured`
      : "must be a configured pepper version";
    fail("pepperVersion", hashScheme === "sha256" ? "must be 0 for sha256" : unknown);
  }
  if (isRetired(s.retiredPepperVersions, hashScheme, pepperVersion)) {
    if (hashScheme === "sha256") {
      fail("hashScheme", "sha256 is retired (retiredPepperVersions is set)");
    }
    fail("pepperVersion", `pepper version ${pepperVersion} is retired (retiredPepperVersions)`);
  }
  const idProblem = r.id === undefined ? undefined : keyIdProblem(r.id);
  if (idProblem !== undefined) fail("id", idProblem);
  // A key rotated in the old system (0.4): when, and the key that replaced it, both or neither.
  const rotatedAt = dateOf(r.rotatedAt, "rotatedAt");
  const replacedByKeyId = r.replacedByKeyId ?? null;
  if (
    (rotatedAt === null) !== (replacedByKeyId === null) ||
    (replacedByKeyId !== null && keyIdProblem(replacedByKeyId) !== undefined)
  ) {
    fail("replacedByKeyId", "must name the key that replaced it, with rotatedAt (or both null)");
  }
  // The old record's expiry is its grace end (spec, `rotate`): without one it stays valid forever.
  if (rotatedAt !== null && (r.expiresAt ?? null) === null) {
    fail("expiresAt", "must be the grace end of a rotated key (rotatedAt is set)");
  }
  const valid = validateCreateInput({
    tenantId: r.tenantId as string,
    name: r.name as string,
    scopes: scopesOf(r.scopes),
    environment: (r.environment ?? "missing") as ApiKeyRecord["environment"],
    createdBy: (r.createdBy ?? undefined) as string | undefined,
    allowedIpCidrs: r.allowedIpCidrs as string[] | undefined,
    expiresAt: dateOf(r.expiresAt, "expiresAt"),
  }, s.layouts);
  const record: Omit<ApiKeyRecord, "id"> & { id?: string } = {
    id: r.id as string | undefined,
    tenantId: valid.tenantId,
    name: valid.name,
    environment: valid.environment,
    prefix: r.prefix as string,
    hash,
    pepperVersion,
    scopes: valid.scopes,
    allowedIpCidrs: valid.allowedIpCidrs,
    lastUsedAt: dateOf(r.lastUsedAt, "lastUsedAt"),
    expiresAt: valid.expiresAt ?? null,
    revokedAt: dateOf(r.revokedAt, "revokedAt"),
    rotatedAt,
    replacedByKeyId: replacedByKeyId as string | null,
    createdBy: valid.createdBy,
    createdAt: dateOf(r.createdAt, "createdAt") ?? s.clock(),
  };
  if (hashScheme !== CURRENT_HASH_SCHEME) record.hashScheme = hashScheme;
  const layout = layoutOf(s, r.layout);
  if (
    s.storage.storesLayout &&
    !s.layouts.fitsLayout(
      record.prefix,
      layout === undefined ? undefined : s.layouts.legacyNamed(layout),
    )
  ) {
    // Kept with the record, it is the only layout the key verifies in.
    const which = layout === undefined ? "(the current one; " : `${layout} (`;
    fail("prefix", `does not fit the record's layout ${which}its length and alphabet)`);
  }
  if (layout !== undefined) record.layout = layout;
  return record;
}

/** The outcome of one record: imported, skipped, revoked, or the conflict's or error's message. */
type Outcome = "imported" | "skipped" | "revoked" | { conflict: string } | { error: string };

/** A validated record to import. */
type Valid = Omit<ApiKeyRecord, "id"> & { id?: string };

/** Revokes a stored key as `ApiKeysService.revoke` does (audit, cache, change feed, event). */
export type RevokeImported = (id: string, context: AuditContext | undefined) => Promise<void>;

/**
 * Whether the stored record `existing` is the imported one `record`: the
 * same hash, or (with an id given) the same id and tenant on the current
 * scheme where the import's hash is on another scheme or pepper version
 * (upgraded on use since it was imported, under whatever version the app
 * calls current).
 */
function isSameKey(existing: ApiKeyRecord, record: Valid): boolean {
  if (existing.hash === record.hash) return true;
  return record.id !== undefined && existing.id === record.id &&
    existing.tenantId === record.tenantId && mayBeUpgraded(existing, record);
}

/** Whether `existing` may be `record` re-hashed on use: on the current scheme, where `record` is not. */
function mayBeUpgraded(existing: ApiKeyRecord, record: Valid): boolean {
  const isCurrent = (r: { hashScheme?: string }) =>
    (r.hashScheme ?? CURRENT_HASH_SCHEME) === CURRENT_HASH_SCHEME;
  return isCurrent(existing) &&
    (!isCurrent(record) || record.pepperVersion !== existing.pepperVersion);
}

/**
 * The conflict of a prefix holding another key than `record`; without an id,
 * it may be the same key upgraded on use, which only the id tells.
 */
function otherKey(existing: ApiKeyRecord, record: Valid): Outcome {
  const upgraded = record.id === undefined && mayBeUpgraded(existing, record)
    ? ", or this key upgraded on use: give the record's id"
    : "";
  return { conflict: `the prefix holds another key (a different hash)${upgraded}` };
}

/** Whether two lists hold the same strings, in any order. */
function sameSet(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  const left = [...(a ?? [])].sort();
  const right = [...(b ?? [])].sort();
  return left.length === right.length && left.every((value, i) => value === right[i]);
}

/**
 * The fields in which the record differs from the same key stored: those
 * that decide what the key may do (the name may have been changed here; an
 * expiry is not compared once the key was rotated here, which set it), and,
 * while the stored hash is still the record's (never upgraded on use: with a
 * wrong one it never verified), how that hash is checked: `hashScheme`,
 * `pepperVersion` and, on a storage that keeps it (`layouts`), a `layout` recorded.
 */
function differences(existing: ApiKeyRecord, record: Valid, layouts: boolean): string[] {
  const fields: string[] = [];
  if (existing.hash === record.hash) {
    const scheme = (r: { hashScheme?: string }) => r.hashScheme ?? CURRENT_HASH_SCHEME;
    if (scheme(existing) !== scheme(record)) fields.push("hashScheme");
    if (existing.pepperVersion !== record.pepperVersion) fields.push("pepperVersion");
    // A layout recorded only: a row with none may be an app's that keeps no layout (the key
    // verifies in any accepted one), written before this tool's storage kept them.
    const recorded = existing.layout !== undefined && existing.layout !== null;
    if (layouts && recorded && existing.layout !== record.layout) fields.push("layout");
  }
  if (existing.tenantId !== record.tenantId) fields.push("tenantId");
  if (existing.environment !== record.environment) fields.push("environment");
  if (!sameSet(existing.scopes, record.scopes)) fields.push("scopes");
  if (!sameSet(existing.allowedIpCidrs, record.allowedIpCidrs)) fields.push("allowedIpCidrs");
  if (
    existing.rotatedAt === null &&
    (existing.expiresAt?.getTime() ?? null) !== (record.expiresAt?.getTime() ?? null)
  ) fields.push("expiresAt");
  return fields;
}

/**
 * A record whose key is stored already (a re-run): revoked here when the
 * record is revoked and the key is not (the old system revoked it since);
 * a conflict naming the fields that differ otherwise (never their values);
 * else skipped.
 */
async function reImport(
  s: ImportSettings,
  existing: ApiKeyRecord,
  valid: Valid,
  context: AuditContext | undefined,
  revoke: RevokeImported,
): Promise<Outcome> {
  const revokes = valid.revokedAt !== null && existing.revokedAt === null;
  if (revokes) await revoke(existing.id, context);
  const fields = differences(existing, valid, s.storage.storesLayout);
  if (fields.length > 0) {
    const revoked = revokes ? " (revoked here, as in the record)" : "";
    return { conflict: `the same key differs in ${fields.join(", ")}${revoked}` };
  }
  return revokes ? "revoked" : "skipped";
}

/** Imports one validated record (see `importKeys`). */
async function importOne(
  s: ImportSettings,
  valid: Valid,
  context: AuditContext | undefined,
  revoke: RevokeImported,
): Promise<Outcome> {
  const existing = await s.storage.findByPrefix(valid.prefix);
  if (existing !== null) {
    return isSameKey(existing, valid)
      ? reImport(s, existing, valid, context, revoke)
      : otherKey(existing, valid);
  }
  if (valid.id !== undefined && await s.storage.findById(valid.id) !== null) {
    return { conflict: "the id belongs to another key" };
  }
  const id = valid.id ?? newRecordId(s.idFactory);
  const record: ApiKeyRecord = { ...valid, id };
  const audit = s.audit?.entry(
    record.tenantId,
    "key.imported",
    context,
    "app",
    record,
    createdChanges(record),
  );
  try {
    await s.storage.insert(record, audit);
  } catch (error) {
    // A concurrent import may have won the prefix.
    const now = await s.storage.findByPrefix(valid.prefix).catch(() => null);
    if (now === null) throw error;
    return isSameKey(now, valid)
      ? reImport(s, now, valid, context, revoke)
      : { conflict: "the prefix holds another key" };
  }
  if (audit !== undefined) s.audit?.appended(record.tenantId);
  // As create does: in this service's prefix set at once (the feed's notice may come later).
  s.fleet?.wrote("created", record.prefix);
  s.emitEvent?.(createdEvent(record, s.clock()));
  return "imported";
}

/** How many conflicts, and errors, a result keeps (the counts hold them all). */
const ISSUES_KEPT = 1_000;

/**
 * See `ApiKeysService.importKeys`: each record in turn, validated, then
 * imported, skipped, revoked (with `revoke`) or reported (to `onIssue` at
 * once; the result keeps the first `ISSUES_KEPT` of each kind and counts
 * all); a failure of one record never stops the others.
 */
export async function importKeys(
  s: ImportSettings,
  records: Iterable<ImportApiKeyRecord> | AsyncIterable<ImportApiKeyRecord>,
  context?: AuditContext,
  revoke?: RevokeImported,
  options?: ImportApiKeysOptions,
): Promise<ImportApiKeysResult> {
  const iterable = records as unknown as Record<symbol, unknown> | null;
  if (
    typeof iterable !== "object" || iterable === null ||
    (typeof iterable[Symbol.iterator] !== "function" &&
      typeof iterable[Symbol.asyncIterator] !== "function")
  ) {
    throw new TypeError("importKeys: records must be an iterable or an async iterable");
  }
  const onIssue = options?.onIssue;
  if (onIssue !== undefined && typeof onIssue !== "function") {
    throw new TypeError("importKeys: options.onIssue must be a function");
  }
  const revokeKey = revoke ?? (() => Promise.reject(new Error("revocation is unavailable here")));
  const result: ImportApiKeysResult = {
    imported: 0,
    skipped: 0,
    revoked: 0,
    conflicts: [],
    errors: [],
    conflictCount: 0,
    errorCount: 0,
  };
  let index = 0;
  for await (const input of records) {
    const at = index++;
    // Only a well-formed prefix is reported: an export may hold a whole key there.
    const given = (input as { prefix?: unknown } | null)?.prefix;
    const prefix = typeof given === "string" && s.layouts.acceptsPrefix(given) ? given : null;
    let outcome: Outcome;
    try {
      outcome = await importOne(s, validateImport(s, input), context, revokeKey);
    } catch (error) {
      if (error instanceof TypeError && !(error instanceof ApiKeyValidationError)) throw error;
      outcome = { error: error instanceof Error ? error.message : "failed" };
    }
    if (outcome === "imported") result.imported++;
    else if (outcome === "skipped") result.skipped++;
    else if (outcome === "revoked") result.revoked++;
    else {
      const kind = "conflict" in outcome ? "conflict" : "error";
      const issue = {
        index: at,
        prefix,
        message: "conflict" in outcome ? outcome.conflict : outcome.error,
      };
      const [kept, count] = kind === "conflict"
        ? [result.conflicts, ++result.conflictCount]
        : [result.errors, ++result.errorCount];
      if (count <= ISSUES_KEPT) kept.push(issue);
      await onIssue?.({ ...issue }, kind);
    }
  }
  return result;
}

/** Options of `keyImporter`. */
export interface KeyImporterOptions {
  /** Where the keys go, wrapped as the service wraps it (deadline, record checks). */
  storage: ApiKeyStorage;
  /** The pepper versions the records may name (positive integers, see `pepperVersionOf`). */
  pepperVersions: Iterable<number>;
  /** As `ApiKeysServiceOptions.legacyKeyLayouts`. */
  legacyKeyLayouts?: readonly LegacyKeyLayout[];
}

/** An import without a service: `keyImporter`'s. */
export interface KeyImporter {
  /** See `ApiKeysService.importKeys`. */
  importKeys(
    records: Iterable<ImportApiKeyRecord> | AsyncIterable<ImportApiKeyRecord>,
    options?: ImportApiKeysOptions,
  ): Promise<ImportApiKeysResult>;
}

/**
 * An import that needs no pepper, only the versions records may name (an
 * import never hashes): the CLI's, which may hold the old peppers at any
 * length or not at all. No cache, audit log, change feed nor events, so a
 * revocation (a re-run's) is the storage's write alone. Throws a `TypeError`
 * naming a bad option (`KeyImporterOptions.legacyKeyLayouts[0] ...`).
 */
export function keyImporter(options: KeyImporterOptions): KeyImporter {
  const label = "KeyImporterOptions";
  const layouts = compileKeyLayouts(options.legacyKeyLayouts, `${label}.legacyKeyLayouts`);
  const storage = new StorageAccess(
    options.storage,
    DEFAULT_STORAGE_TIMEOUT_MS,
    `${label}.storage`,
    [],
    (line) => layouts.redact(line),
  );
  const versions = new Set(options.pepperVersions);
  const clock = () => new Date();
  const s: ImportSettings = {
    layouts,
    storage,
    clock,
    idFactory: undefined,
    audit: undefined,
    fleet: undefined,
    emitEvent: undefined,
    retiredPepperVersions: undefined,
    hasher: { hasVersion: (version) => versions.has(version) },
  };
  const revoke = async (id: string) => {
    await storage.revoke(id, clock());
  };
  return {
    async importKeys(records, importOptions) {
      await storage.loaded();
      return importKeys(s, records, undefined, revoke, importOptions);
    },
  };
}
