/**
 * Layout of raw API keys: `<namespace>_<env>_<prefix>_<secret><checksum>`.
 *
 * - `namespace`: a lowercase letter, then up to 15 lowercase letters or digits
 *   (default `ak`).
 * - `env`: `live` or `test`.
 * - `prefix`: 12 base62 characters, public, used to look the key up.
 * - `secret`: 32 base62 characters from the CSPRNG (about 190 bits).
 * - `checksum`: CRC-32 of everything before it, 6 base62 characters, so typos
 *   and garbage are rejected offline.
 *
 * Over 300 lines because the layout, its one parser and its checksum are one
 * rule, read on every verification.
 *
 * @module
 */
import { BASE62_ALPHABET, encodeBase62Fixed, randomBase62 } from "./_base62.ts";
import type { Environment } from "./types.ts";

/** CRC-32 lookup table (IEEE 802.3, the zlib polynomial). */
const CRC_TABLE: Uint32Array = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/**
 * CRC-32 (IEEE 802.3, the zlib polynomial) of the low byte of each char code
 * of `text` (exact for ASCII), up to `end` (default: the whole text): the
 * checksum of keys. Internal: not exported by the entry point.
 *
 * @example
 * ```ts
 * import { crc32Ascii } from "./key_format.ts";
 * crc32Ascii("123456789").toString(16); // "cbf43926"
 * ```
 */
export function crc32Ascii(text: string, end: number = text.length): number {
  let crc = 0xffffffff;
  for (let i = 0; i < end; i++) {
    crc = CRC_TABLE[(crc ^ text.charCodeAt(i)) & 0xff] ^ (crc >>> 8);
  }
  return (crc ^ 0xffffffff) >>> 0;
}

/**
 * Length of the public prefix.
 *
 * @example
 * ```ts
 * import { API_KEY_PREFIX_LENGTH } from "./key_format.ts";
 * API_KEY_PREFIX_LENGTH; // 12
 * ```
 */
export const API_KEY_PREFIX_LENGTH = 12;

/**
 * Length of the secret (32 base62 characters, about 190 bits of entropy).
 *
 * @example
 * ```ts
 * import { API_KEY_SECRET_LENGTH } from "./key_format.ts";
 * API_KEY_SECRET_LENGTH; // 32
 * ```
 */
export const API_KEY_SECRET_LENGTH = 32;

/**
 * Length of the base62 CRC-32 checksum appended to the secret.
 *
 * @example
 * ```ts
 * import { API_KEY_CHECKSUM_LENGTH } from "./key_format.ts";
 * API_KEY_CHECKSUM_LENGTH; // 6
 * ```
 */
export const API_KEY_CHECKSUM_LENGTH = 6;

/**
 * Default namespace of generated keys.
 *
 * @example
 * ```ts
 * import { DEFAULT_API_KEY_NAMESPACE } from "./key_format.ts";
 * DEFAULT_API_KEY_NAMESPACE; // "ak"
 * ```
 */
export const DEFAULT_API_KEY_NAMESPACE = "ak";

/**
 * Valid namespaces: a lowercase letter, then up to 15 lowercase letters or digits.
 *
 * @example
 * ```ts
 * import { API_KEY_NAMESPACE_PATTERN } from "./key_format.ts";
 * API_KEY_NAMESPACE_PATTERN.test("acme2"); // true
 * ```
 */
export const API_KEY_NAMESPACE_PATTERN: RegExp = /^[a-z][a-z0-9]{0,15}$/;

/**
 * Length of the longest valid key (16-character namespace). Longer inputs are
 * malformed before any other work.
 *
 * @example
 * ```ts
 * import { MAX_API_KEY_LENGTH } from "./key_format.ts";
 * MAX_API_KEY_LENGTH; // 73
 * ```
 */
export const MAX_API_KEY_LENGTH: number = 16 + 1 + 4 + 1 + API_KEY_PREFIX_LENGTH + 1 +
  API_KEY_SECRET_LENGTH + API_KEY_CHECKSUM_LENGTH;

/** Length of the shortest valid key (1-character namespace). */
const MIN_API_KEY_LENGTH = MAX_API_KEY_LENGTH - 15;

const KEY_SOURCE = "[a-z][a-z0-9]{0,15}_(?:live|test)_[0-9A-Za-z]{12}_[0-9A-Za-z]{38}";
const KEY_LAYOUT = new RegExp(`^${KEY_SOURCE}$`);

/** Length of everything after the namespace: `_env_` + prefix + `_` + secret + checksum. */
const FIXED_TAIL_LENGTH = 6 + API_KEY_PREFIX_LENGTH + 1 + API_KEY_SECRET_LENGTH +
  API_KEY_CHECKSUM_LENGTH;
const UNDERSCORE = 0x5f;
const isLower = (code: number) => code >= 0x61 && code <= 0x7a;
const isDigit = (code: number) => code >= 0x30 && code <= 0x39;
/** Base62 digit value of each ASCII code, -1 for other codes. */
const BASE62_VALUES: Int8Array = (() => {
  const values = new Int8Array(128).fill(-1);
  for (let i = 0; i < BASE62_ALPHABET.length; i++) values[BASE62_ALPHABET.charCodeAt(i)] = i;
  return values;
})();
/** Whether `text[start..end)` is all base62 characters. */
function isBase62Run(text: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const code = text.charCodeAt(i);
    if (code > 0x7f || BASE62_VALUES[code] < 0) return false;
  }
  return true;
}

/**
 * Matches any key-shaped string of any namespace (checksum not checked). It
 * has no word boundaries on purpose: a key glued to other text (URL-encoded
 * `Bearer%20<key>`, `token_<key>`, `<key>_old`) is still found. It has no `g`
 * flag, so `.test()` is stateless; use `redactApiKeys` to replace all.
 *
 * @example
 * ```ts
 * import { API_KEY_REDACT_REGEX } from "./key_format.ts";
 * API_KEY_REDACT_REGEX.test("no key here"); // false
 * ```
 */
export const API_KEY_REDACT_REGEX: RegExp = new RegExp(KEY_SOURCE);

const REDACT_ALL = new RegExp(API_KEY_REDACT_REGEX.source, "g");

/**
 * A freshly generated key. `raw` is shown once; only a hash of `secret` is stored.
 *
 * @example
 * ```ts
 * import type { GeneratedApiKey } from "./key_format.ts";
 * const show = (key: GeneratedApiKey) => `${key.prefix} (${key.environment})`;
 * ```
 */
export interface GeneratedApiKey {
  /** The full key. */
  raw: string;
  /** Namespace. */
  namespace: string;
  /** Environment. */
  environment: Environment;
  /** Public lookup prefix. */
  prefix: string;
  /** Secret part (without the checksum). */
  secret: string;
  /** Base62 CRC-32 checksum. */
  checksum: string;
}

/**
 * A key parsed by `parseKey`: same fields as `GeneratedApiKey`.
 *
 * @example
 * ```ts
 * import type { ParsedApiKey } from "./key_format.ts";
 * const lookup = (key: ParsedApiKey) => key.prefix;
 * ```
 */
export type ParsedApiKey = GeneratedApiKey;

/**
 * Options of `generateKey`.
 *
 * @example
 * ```ts
 * import type { GenerateKeyOptions } from "./key_format.ts";
 * const options: GenerateKeyOptions = { environment: "test", namespace: "acme" };
 * ```
 */
export interface GenerateKeyOptions {
  /** Environment encoded in the key. */
  environment: Environment;
  /** Namespace (default `ak`). */
  namespace?: string;
}

/**
 * Throws a `TypeError` naming `label` unless `namespace` is valid.
 *
 * @example
 * ```ts
 * import { assertValidNamespace } from "./key_format.ts";
 * assertValidNamespace("acme", "namespace");
 * ```
 */
export function assertValidNamespace(namespace: unknown, label: string): void {
  if (typeof namespace !== "string" || !API_KEY_NAMESPACE_PATTERN.test(namespace)) {
    throw new TypeError(
      `${label} must be a lowercase letter followed by up to 15 lowercase letters or digits`,
    );
  }
}

function checksumOf(body: string): string {
  return encodeBase62Fixed(crc32Ascii(body), API_KEY_CHECKSUM_LENGTH);
}

/**
 * Generates a new key from the platform CSPRNG.
 *
 * @example
 * ```ts
 * import { generateKey } from "./key_format.ts";
 * const key = generateKey({ environment: "live", namespace: "acme" });
 * key.raw.startsWith("acme_live_"); // true
 * ```
 */
export function generateKey(options: GenerateKeyOptions): GeneratedApiKey {
  const namespace = options.namespace ?? DEFAULT_API_KEY_NAMESPACE;
  assertValidNamespace(namespace, "namespace");
  const environment = options.environment;
  if (environment !== "live" && environment !== "test") {
    throw new TypeError('environment must be "live" or "test"');
  }
  const prefix = randomBase62(API_KEY_PREFIX_LENGTH);
  const secret = randomBase62(API_KEY_SECRET_LENGTH);
  const body = `${namespace}_${environment}_${prefix}_${secret}`;
  const checksum = checksumOf(body);
  return { raw: body + checksum, namespace, environment, prefix, secret, checksum };
}

/**
 * Parses a raw key. Returns `null` for anything malformed, including a wrong
 * checksum or an over-long input (checked first); never throws.
 *
 * @example
 * ```ts
 * import { generateKey, parseKey } from "./key_format.ts";
 * const { raw } = generateKey({ environment: "test" });
 * parseKey(raw)?.environment; // "test"
 * parseKey("ak_test_nope"); // null
 * ```
 */
export function parseKey(raw: string): ParsedApiKey | null {
  if (typeof raw !== "string" || raw.length > MAX_API_KEY_LENGTH) return null;
  const length = raw.length;
  if (length < MIN_API_KEY_LENGTH) return null;
  // The fields after the namespace have fixed widths, so the length gives the
  // namespace's: a hand-written scan (no RegExp, no slices before the checksum).
  const ns = length - FIXED_TAIL_LENGTH;
  if (!isLower(raw.charCodeAt(0))) return null;
  for (let i = 1; i < ns; i++) {
    const code = raw.charCodeAt(i);
    if (!isLower(code) && !isDigit(code)) return null;
  }
  if (raw.charCodeAt(ns) !== UNDERSCORE || raw.charCodeAt(ns + 5) !== UNDERSCORE) return null;
  const environment = raw.startsWith("live", ns + 1)
    ? "live"
    : raw.startsWith("test", ns + 1)
    ? "test"
    : null;
  if (environment === null) return null;
  const prefixStart = ns + 6;
  const secretStart = prefixStart + API_KEY_PREFIX_LENGTH + 1;
  if (raw.charCodeAt(secretStart - 1) !== UNDERSCORE) return null;
  if (!isBase62Run(raw, prefixStart, secretStart - 1) || !isBase62Run(raw, secretStart, length)) {
    return null;
  }
  const checksumStart = length - API_KEY_CHECKSUM_LENGTH;
  let checksum = 0;
  for (let i = checksumStart; i < length; i++) {
    checksum = checksum * 62 + BASE62_VALUES[raw.charCodeAt(i)];
  }
  if (crc32Ascii(raw, checksumStart) !== checksum) return null;
  return {
    raw,
    namespace: raw.slice(0, ns),
    environment,
    prefix: raw.slice(prefixStart, prefixStart + API_KEY_PREFIX_LENGTH),
    secret: raw.slice(secretStart, checksumStart),
    checksum: raw.slice(checksumStart),
  };
}

/**
 * Whether `value` has the shape of a key (no checksum check). Cheap; for
 * deciding whether e.g. a Bearer token is meant as an API key.
 *
 * @example
 * ```ts
 * import { hasApiKeyLayout } from "./key_format.ts";
 * hasApiKeyLayout("eyJhbGciOiJIUzI1NiJ9.e30.x"); // false
 * ```
 */
export function hasApiKeyLayout(value: string): boolean {
  return typeof value === "string" && value.length <= MAX_API_KEY_LENGTH &&
    value.length >= MIN_API_KEY_LENGTH && KEY_LAYOUT.test(value);
}

/**
 * Replaces every key-shaped substring of `text` with `[REDACTED_API_KEY]`.
 *
 * @example
 * ```ts
 * import { generateKey, redactApiKeys } from "./key_format.ts";
 * const { raw } = generateKey({ environment: "live" });
 * redactApiKeys(`Authorization: Bearer ${raw}`); // "Authorization: Bearer [REDACTED_API_KEY]"
 * ```
 */
export function redactApiKeys(text: string): string {
  return text.replace(REDACT_ALL, "[REDACTED_API_KEY]");
}
