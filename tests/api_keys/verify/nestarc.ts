/**
 * Keys and records made the way `@nestarc/api-keys` 0.1 makes them, written
 * here from their description (docs: ../shared facts, "Key layout", "Stored
 * hash"), independently of the library: `<namespace>_<live|test>_<12>_<32>`
 * from `A-Za-z0-9` drawn as `randomBytes % 62`, no checksum; the hash is the
 * lowercase hex SHA-256 of the UTF-8 string `secret + pepper`.
 */
import { createHash, randomBytes } from "node:crypto";
import type { ApiKeyRecord, ApiKeysService, Environment } from "../../../api_keys/mod.ts";
import { storedRecord } from "../storage/stored_record.ts";

const NESTARC_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

function nestarcRandom(length: number): string {
  const bytes = randomBytes(length);
  let out = "";
  for (let i = 0; i < length; i++) out += NESTARC_ALPHABET[bytes[i] % 62];
  return out;
}

/** A nestarc-v0 key: raw, prefix and secret. */
export function nestarcKey(namespace: string, environment: Environment = "live") {
  const prefix = nestarcRandom(12);
  const secret = nestarcRandom(32);
  return { raw: `${namespace}_${environment}_${prefix}_${secret}`, prefix, secret, environment };
}

/** Lowercase hex SHA-256 of `secret + pepper` (the `sha256-pepper` scheme). */
export function nestarcHash(secret: string, pepper: string): string {
  return createHash("sha256").update(secret + pepper, "utf8").digest("hex");
}

/** Lowercase hex SHA-256 of `secret` (the `sha256` scheme). */
export function plainSha256(secret: string): string {
  return createHash("sha256").update(secret, "utf8").digest("hex");
}

let sequence = 0;

/** A record as a migrated nestarc row reads: `hashScheme` and `layout` given, no rotation fields set. */
export function legacyRecord(
  key: { prefix: string; environment: Environment },
  hash: string,
  overrides: Partial<ApiKeyRecord> = {},
): ApiKeyRecord {
  sequence += 1;
  // A nestarc 0.1 row has no allowlist column.
  const { allowedIpCidrs: _none, ...record } = storedRecord({
    id: `legacy-${sequence}`,
    tenantId: "t-legacy",
    name: `legacy ${sequence}`,
    environment: key.environment,
    prefix: key.prefix,
    hash,
    createdAt: new Date("2029-06-01T00:00:00.000Z"),
  });
  return { ...record, layout: "nestarc-v0", ...overrides };
}

/**
 * Imports one nestarc-v0 key of tenant `t1` (hash `sha256-pepper` with
 * `pepper`) into `service`, which accepts the layout; answers the key.
 */
export async function importNestarcKey(
  service: ApiKeysService,
  pepper: string,
  environment: Environment = "live",
) {
  const key = nestarcKey(service.namespace, environment);
  const result = await service.importKeys([{
    tenantId: "t1",
    name: "old",
    environment,
    prefix: key.prefix,
    hash: nestarcHash(key.secret, pepper),
    hashScheme: "sha256-pepper",
    pepperVersion: 1,
    scopes: ["orders:read"],
  }]);
  if (result.imported !== 1) throw new Error(`import failed: ${JSON.stringify(result)}`);
  return key;
}
