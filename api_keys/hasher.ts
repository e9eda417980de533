/**
 * Peppered hashing of key secrets: HMAC-SHA-256 keyed by the pepper of a
 * version (the `hmac-sha256` scheme, the only one new hashes use). Two
 * hashers make the same hashes: `Sha256Hasher` (`./sha256_hasher.ts`), the
 * spec's, synchronous (`@noble/hashes`), and `WebCryptoSha256Hasher`, the
 * service's, which returns promises and also verifies the legacy schemes
 * imported records carry (`sha256-pepper`, `sha256`, with `@noble/hashes`'
 * SHA-256 loaded on first need, so this file loads no package).
 *
 * @module
 */
import { hasLoneSurrogate } from "../telemetry/_text.ts";
import type { ApiKeyHashScheme, HashedSecret, HasherOptions } from "./types.ts";

/** Synchronous SHA-256 of bytes (`@noble/hashes/sha2`'s `sha256`). */
type Sha256 = typeof import("@noble/hashes/sha2").sha256;

let loaded: Sha256 | undefined;
let loading: Promise<Sha256> | undefined;

/**
 * Loads SHA-256 once (a failed load is retried on the next call); resolves it.
 * The library's one home of `@noble/hashes`' SHA-256 outside `Sha256Hasher`,
 * loaded on first need rather than at import (issue 41: `./api-keys/nest`
 * stays light): the legacy schemes here, and the counter subjects too long to
 * keep readable (`metering/_limits.ts`, which starts the load with a limiter).
 * Internal: not exported by the entry point.
 *
 * @example
 * ```ts
 * import { loadSha256 } from "./hasher.ts";
 * const sha256 = await loadSha256();
 * sha256(new Uint8Array(0)).length; // 32
 * ```
 */
export function loadSha256(): Promise<Sha256> {
  loading ??= import("@noble/hashes/sha2").then(
    (module) => (loaded = module.sha256),
    (error) => {
      loading = undefined;
      throw error;
    },
  );
  return loading;
}

/**
 * SHA-256 when `loadSha256` has resolved, else `undefined` (the caller awaits
 * `loadSha256()` or fails closed). Internal.
 *
 * @example
 * ```ts
 * import { loadedSha256, loadSha256 } from "./hasher.ts";
 * await loadSha256();
 * loadedSha256() !== undefined; // true
 * ```
 */
export function loadedSha256(): Sha256 | undefined {
  return loaded;
}

/**
 * Every hash scheme a record may carry: `hmac-sha256` (the current one, and
 * the meaning of an absent `hashScheme`), then the legacy `sha256-pepper`
 * and `sha256`.
 */
export const API_KEY_HASH_SCHEMES: readonly ApiKeyHashScheme[] = Object.freeze([
  "hmac-sha256",
  "sha256-pepper",
  "sha256",
]);

/** The scheme of every new hash, and of a record without `hashScheme`. */
export const CURRENT_HASH_SCHEME = "hmac-sha256";

/**
 * UTF-8 encoder of both hashers. Internal: not exported by the entry point. Typed by its one
 * method: `TextEncoder` is a DOM type a Node app's `lib` may lack, and this reaches the
 * entry point's declarations.
 */
export const encoder: { encode(input?: string): Uint8Array<ArrayBuffer> } = new TextEncoder();

/**
 * Shortest accepted current pepper, in UTF-8 bytes (an older version, which
 * only verifies the hashes made with it, may be shorter).
 */
export const MIN_PEPPER_BYTES = 32;

const HASH_BYTES = 32;
const NOTHING = new Uint8Array(0);
const ZERO_DIGEST = new Uint8Array(HASH_BYTES);

/**
 * UTF-8 bytes of `text`. Key secrets are short ASCII, which is copied in a
 * plain loop (about 10x cheaper than `TextEncoder.encode` on Deno, where
 * that is a call into the runtime); anything else goes through the encoder,
 * but text with a lone surrogate, which the encoder would write as U+FFFD
 * (so `"a\uD800"` and `"a\uFFFD"` would hash alike), through `wtf8`.
 * Internal: not exported by the entry point.
 */
export function utf8(text: string): Uint8Array<ArrayBuffer> {
  if (typeof text !== "string" || text.length > 256) return encode(text);
  const length = text.length;
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i);
    if (code > 0x7f) return encode(text);
    bytes[i] = code;
  }
  return bytes;
}

/** The encoder's bytes of `text`, or `wtf8`'s for text with a lone surrogate. */
const encode = (text: string) =>
  typeof text === "string" && hasLoneSurrogate(text) ? wtf8(text) : encoder.encode(text);

/**
 * The WTF-8 bytes of `text`: UTF-8, each lone surrogate written as its own
 * three bytes (as UTF-8 would write its code point): one string, one byte
 * sequence, and the UTF-8 of well-formed text.
 */
function wtf8(text: string): Uint8Array<ArrayBuffer> {
  const bytes: number[] = [];
  for (const char of text) {
    const point = char.codePointAt(0)!;
    if (point < 0x80) bytes.push(point);
    else if (point < 0x800) bytes.push(0xc0 | (point >> 6), 0x80 | (point & 63));
    else if (point < 0x10000) {
      bytes.push(0xe0 | (point >> 12), 0x80 | ((point >> 6) & 63), 0x80 | (point & 63));
    } else {
      bytes.push(
        0xf0 | (point >> 18),
        0x80 | ((point >> 12) & 63),
        0x80 | ((point >> 6) & 63),
        0x80 | (point & 63),
      );
    }
  }
  return new Uint8Array(bytes);
}
/**
 * A well-formed hash that `dummyVerify` decodes like a stored one: the
 * base64url of 32 zero bytes (the same kind of string as a stored hash; written
 * out, since the first `btoa` of a process costs about 0.3 ms at import). Internal.
 */
export const DUMMY_HASH: string = "A".repeat(43);
/** The signature a malformed hash is compared against. Internal. */
export const DUMMY_SIGNATURE: Uint8Array<ArrayBuffer> = new Uint8Array(HASH_BYTES);
/** The legacy (hex) counterpart of `DUMMY_HASH`, decoded where a path has no hex hash. */
const DUMMY_HEX = "0".repeat(HASH_BYTES * 2);

/** Base64url without padding. Internal: not exported by the entry point. */
export function toBase64Url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

const BASE64URL_VALUES = new Int16Array(128).fill(-1);
for (let i = 0; i < 64; i++) {
  BASE64URL_VALUES[
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".charCodeAt(i)
  ] = i;
}

/** Decodes a 43-character base64url HMAC-SHA-256 digest; null when malformed. Internal. */
export function fromBase64Url(text: string): Uint8Array<ArrayBuffer> | null {
  if (typeof text !== "string" || text.length !== 43) return null;
  const bytes = new Uint8Array(HASH_BYTES);
  let buffer = 0;
  let bits = 0;
  let out = 0;
  for (let i = 0; i < 43; i++) {
    const code = text.charCodeAt(i);
    const value = code < 128 ? BASE64URL_VALUES[code] : -1;
    if (value < 0) return null;
    buffer = (buffer << 6) | value;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes[out++] = (buffer >> bits) & 0xff;
    }
  }
  return bytes;
}

const HEX_VALUES = new Int8Array(128).fill(-1);
for (let i = 0; i < 16; i++) HEX_VALUES["0123456789abcdef".charCodeAt(i)] = i;

/** Decodes a 64-character lowercase hex SHA-256 digest; null when malformed. */
function fromHex(text: string): Uint8Array | null {
  if (typeof text !== "string" || text.length !== 64) return null;
  const bytes = new Uint8Array(HASH_BYTES);
  for (let i = 0; i < HASH_BYTES; i++) {
    const high = text.charCodeAt(i * 2);
    const low = text.charCodeAt(i * 2 + 1);
    const h = high < 128 ? HEX_VALUES[high] : -1;
    const l = low < 128 ? HEX_VALUES[low] : -1;
    if (h < 0 || l < 0) return null;
    bytes[i] = (h << 4) | l;
  }
  return bytes;
}

/** Whether two 32-byte digests are equal, in time independent of where they differ. Internal. */
export function digestsEqual(a: Uint8Array, b: Uint8Array): boolean {
  let difference = 0;
  for (let i = 0; i < HASH_BYTES; i++) difference |= a[i] ^ b[i];
  return difference === 0;
}

/**
 * Whether `hash` has the form of a stored hash of `scheme` (43 base64url
 * characters for `hmac-sha256`, 64 lowercase hex digits for the legacy
 * schemes). Internal: not exported by the entry point.
 */
export function isWellFormedHash(scheme: ApiKeyHashScheme, hash: string): boolean {
  return scheme === CURRENT_HASH_SCHEME ? fromBase64Url(hash) !== null : fromHex(hash) !== null;
}

/** The fix the pepper errors name: how to make a pepper. */
const MAKE_PEPPER = "make one with `openssl rand -base64 32`";

/**
 * `value` as a pepper version: a positive safe integer, or its decimal string
 * (no sign, no leading zero); `undefined` for anything else. Internal: not
 * exported by the entry point.
 */
export function pepperVersionOf(value: unknown): number | undefined {
  const version = typeof value === "string" && /^[1-9][0-9]*$/.test(value) ? Number(value) : value;
  return typeof version === "number" && Number.isSafeInteger(version) && version >= 1
    ? version
    : undefined;
}

/**
 * The problem of a pepper map key `key` that `pepperVersionOf` refuses, after
 * `label`: the key is quoted only when it is 1 to 9 ASCII digits, since a map
 * written the wrong way round holds a pepper there. Internal: not exported by
 * the entry point.
 */
export function notAVersion(label: string, key: string): string {
  return /^[0-9]{1,9}$/.test(key)
    ? `${label} version ${JSON.stringify(key)} is not a positive integer`
    : `${label} has a key that is not a version (not a positive integer; each version maps ` +
      'to its pepper, e.g. {"1": "..."})';
}

/**
 * Validates a pepper map (keys may be numeric strings) and returns it keyed by
 * number. Throws a `TypeError` naming `label` for an empty map, a version that
 * is not a positive integer, or a pepper that is not a non-empty, well-formed string. The
 * length rule is the current version's (`requireCurrentLength`): an older
 * pepper only verifies the hashes made with it, which exist whatever its
 * length (an earlier deployment's), and are re-hashed on first use.
 */
function parsePeppers(peppers: unknown, label: string): Map<number, string> {
  if (typeof peppers !== "object" || peppers === null || Array.isArray(peppers)) {
    throw new TypeError(`${label} must be an object mapping version numbers to peppers`);
  }
  if (peppers instanceof Map) {
    throw new TypeError(`${label} must be a plain object ({ 1: pepper }), not a Map`);
  }
  const out = new Map<number, string>();
  for (const [key, pepper] of Object.entries(peppers)) {
    const version = pepperVersionOf(key);
    if (version === undefined) {
      throw new TypeError(notAVersion(label, key));
    }
    if (typeof pepper !== "string" || pepper === "") {
      throw new TypeError(
        `${label} version ${version} must be a non-empty string (a pepper is a secret of at ` +
          `least ${MIN_PEPPER_BYTES} bytes: is its environment variable set? ${MAKE_PEPPER})`,
      );
    }
    if (hasLoneSurrogate(pepper)) {
      // Encoded as U+FFFD: another pepper would make the same hashes.
      throw new TypeError(
        `${label} version ${version} is not well-formed text (a lone surrogate); ${MAKE_PEPPER}`,
      );
    }
    out.set(version, pepper);
  }
  if (out.size === 0) throw new TypeError(`${label} must configure at least one pepper`);
  return out;
}

/**
 * Resolves the current pepper version: `requested` when configured, else the
 * highest. Throws a `TypeError` naming `label` for an unknown version.
 */
function resolveCurrentVersion(
  peppers: Map<number, string>,
  requested: unknown,
  label: string,
): number {
  if (requested === undefined) return Math.max(...peppers.keys());
  const version = pepperVersionOf(requested);
  if (version === undefined) throw new TypeError(`${label} must be a positive integer`);
  if (!peppers.has(version)) throw new TypeError(`${label} ${version} has no pepper`);
  return version;
}

/**
 * Throws a `TypeError` naming the options by `labels` when the current pepper,
 * which hashes every new key, is shorter than `MIN_PEPPER_BYTES`; the message
 * says how an existing deployment's short pepper stays (as an older version).
 */
function requireCurrentLength(
  peppers: Map<number, string>,
  current: number,
  labels: { peppers: string; currentVersion: string },
): void {
  if (encoder.encode(peppers.get(current)!).length < MIN_PEPPER_BYTES) {
    const next = Math.max(...peppers.keys()) + 1;
    throw new TypeError(
      `${labels.peppers} version ${current} must be a string of at least ${MIN_PEPPER_BYTES} ` +
        `bytes (the current pepper hashes new keys; ${MAKE_PEPPER}; if this pepper already ` +
        `hashes stored keys, keep it as version ${current} and add a new pepper as version ` +
        `${next} (${labels.currentVersion}: ${next}))`,
    );
  }
}

/** The validated pepper options both hashers are built from. */
export interface PepperConfig {
  readonly peppers: Map<number, string>;
  readonly currentVersion: number;
}

const HASHER_LABELS = {
  peppers: "HasherOptions.peppers",
  currentVersion: "HasherOptions.currentVersion",
};

/**
 * Validates `HasherOptions`; each `TypeError` names the option by `labels`.
 * Internal: not exported by the entry point.
 */
export function readHasherOptions(options: unknown, labels = HASHER_LABELS): PepperConfig {
  if (typeof options !== "object" || options === null) {
    throw new TypeError("HasherOptions must be an object");
  }
  const { peppers: given, currentVersion: requested } = options as HasherOptions;
  const peppers = parsePeppers(given, labels.peppers);
  const currentVersion = resolveCurrentVersion(peppers, requested, labels.currentVersion);
  requireCurrentLength(peppers, currentVersion, labels);
  return { peppers, currentVersion };
}

/**
 * The pepper options of each `Sha256Hasher`, read by `createHasher`; only
 * `./sha256_hasher.ts` writes it. Internal: not exported by the entry point.
 */
export const SHA256_HASHER_CONFIGS: WeakMap<object, PepperConfig> = new WeakMap();
/** Where `createHasher` passes validated options (module-private). */
const CONFIG = Symbol("config");
/** Where `createHasher` passes `digestOnEveryVerify` (module-private). */
const DIGEST_ON_EVERY_VERIFY = Symbol("digestOnEveryVerify");

/**
 * The service's hasher: from the service's options, or from the `Sha256Hasher`
 * given as `hasher` (which replaces `peppers` and `currentVersion`); option
 * errors name the options as the caller calls them (e.g.
 * `ApiKeysServiceOptions.peppers version 1 must be ...`). With
 * `digestOnEveryVerify` (a service with legacy key layouts, so legacy
 * records), every verification also does the legacy digest, so a failure
 * costs the same whatever the record's scheme. Internal: not exported by the
 * entry point.
 */
export function createHasher(
  options: { peppers: unknown; currentVersion?: unknown; hasher?: unknown },
  labels: { peppers: string; currentVersion: string; hasher: string },
  digestOnEveryVerify = false,
): WebCryptoSha256Hasher {
  let config: PepperConfig | undefined;
  if (options.hasher === undefined) {
    config = readHasherOptions(options, labels);
  } else if (options.peppers !== undefined || options.currentVersion !== undefined) {
    throw new TypeError(
      `${labels.hasher} replaces peppers and currentPepperVersion; give one or the other`,
    );
  } else {
    config = SHA256_HASHER_CONFIGS.get(options.hasher as object);
    if (config === undefined) {
      throw new TypeError(
        `${labels.hasher} must be a Sha256Hasher of this copy of the library (an app loading ` +
          "both its ESM and its CommonJS build has two)",
      );
    }
  }
  return new WebCryptoSha256Hasher(
    { [CONFIG]: config, [DIGEST_ON_EVERY_VERIFY]: digestOnEveryVerify } as unknown as HasherOptions,
  );
}

/** Each hasher's imports of its keys, begun at construction (see `keysImported`). */
const KEYS_IMPORTED = new WeakMap<WebCryptoSha256Hasher, Promise<unknown>>();

/**
 * Settles once every configured version's key of `hasher` is imported (or
 * failed to: that version's calls then reject); never rejects. The service
 * loads after it, so no verification waits on an import. Internal: not
 * exported by the entry point.
 */
export async function keysImported(hasher: WebCryptoSha256Hasher): Promise<void> {
  await KEYS_IMPORTED.get(hasher);
}

/** Blocks SHA-256 compresses for a message of `length` bytes. */
function blocksOf(length: number): number {
  return ((length + 8) >>> 6) + 1;
}

/** Zeros hashed by `legacyDigest` (grown to the longest needed, then sliced). */
let zeros = new Uint8Array(0);

/**
 * `sha256` of `data` then `pepper` (the legacy digest), then one discarded
 * hash of zeros compressing as many blocks more as a pepper of `longest`
 * bytes would have added, plus one: the same hashes and compressions
 * whatever the pepper (an unknown prefix's, the longest, too).
 */
function legacyDigest(
  sha256: Sha256,
  data: Uint8Array,
  pepper: Uint8Array,
  longest: number,
): Uint8Array {
  const digest = sha256.create().update(data).update(pepper).digest();
  const extra = blocksOf(data.length + longest) - blocksOf(data.length + pepper.length);
  if (zeros.length < 64 * extra) zeros = new Uint8Array(64 * extra);
  sha256(zeros.subarray(0, 64 * extra)); // extra + 1 blocks
  return digest;
}

/**
 * The service's hasher: `Sha256Hasher`'s hashes through Web Crypto (its
 * methods return promises). Every configured version's `CryptoKey` is
 * imported at construction (so no verification imports one: an older
 * version's record costs what an unknown prefix does); comparison is
 * constant-time (`crypto.subtle.verify`).
 *
 * `verify` dispatches on the record's scheme. The legacy schemes
 * (`sha256-pepper`: lowercase hex SHA-256 of `secret + pepper`; `sha256`:
 * of the secret alone, pepper version 0) are compared in constant time after
 * the synchronous digests of both schemes, and then do the HMAC verification
 * of a failed `hmac-sha256` check (same key, same lengths, same awaits), so a
 * legacy record's failure does the current scheme's work, and (with
 * `digestOnEveryVerify`) the current scheme's the legacy one's.
 *
 * @example
 * ```ts
 * import { WebCryptoSha256Hasher } from "./hasher.ts";
 * const hasher = new WebCryptoSha256Hasher({
 *   peppers: { 1: "a-pepper-of-at-least-thirty-two-bytes" },
 * });
 * const { hash, pepperVersion } = await hasher.hash("secret");
 * await hasher.verify("secret", hash, pepperVersion); // true
 * ```
 */
export class WebCryptoSha256Hasher {
  /** Version used for new hashes. */
  readonly currentVersion: number;
  readonly #peppers: Map<number, string>;
  readonly #keys = new Map<number, Promise<CryptoKey>>();
  readonly #imported = new Map<number, CryptoKey>();
  /** UTF-8 bytes of each pepper (the legacy `secret + pepper` digest). */
  readonly #pepperBytes = new Map<number, Uint8Array>();
  /** The longest pepper: the stand-in of a digest without a known pepper. */
  readonly #longestPepper: Uint8Array;
  readonly #digestOnEveryVerify: boolean;

  /** Validates options; throws a `TypeError` naming the problem. */
  constructor(options: HasherOptions) {
    const given = options as { [CONFIG]?: PepperConfig; [DIGEST_ON_EVERY_VERIFY]?: boolean };
    const config = given?.[CONFIG] ?? readHasherOptions(options);
    this.#peppers = config.peppers;
    this.currentVersion = config.currentVersion;
    let longest = NOTHING;
    for (const [version, pepper] of this.#peppers) {
      const bytes = encoder.encode(pepper);
      this.#pepperBytes.set(version, bytes);
      if (bytes.length > longest.length) longest = bytes;
    }
    this.#longestPepper = longest;
    KEYS_IMPORTED.set(this, Promise.allSettled([...this.#peppers.keys()].map((v) => this.#key(v))));
    this.#digestOnEveryVerify = given?.[DIGEST_ON_EVERY_VERIFY] === true;
    // Every verification digests the legacy way: load SHA-256 now (a failure rejects the verify).
    if (this.#digestOnEveryVerify) loadSha256().catch(() => {});
  }
  /** Whether a pepper of `version` is configured. */
  hasVersion(version: number): boolean {
    return this.#peppers.has(version);
  }

  /**
   * Whether a record of `scheme` (absent: `hmac-sha256`) and `version` can
   * verify here: its pepper is configured, or it is a `sha256` record of
   * version 0.
   */
  canVerify(scheme: ApiKeyHashScheme | undefined, version: number): boolean {
    return scheme === "sha256" ? version === 0 : this.#peppers.has(version);
  }

  #key(version: number): Promise<CryptoKey> {
    let key = this.#keys.get(version);
    if (key === undefined) {
      const pepper = this.#peppers.get(version);
      if (pepper === undefined) throw new RangeError(`pepper version ${version} is not configured`);
      key = crypto.subtle.importKey(
        "raw",
        encoder.encode(pepper),
        { name: "HMAC", hash: "SHA-256" },
        false,
        ["sign", "verify"],
      );
      key.then((imported) => this.#imported.set(version, imported), () => {});
      this.#keys.set(version, key);
    }
    return key;
  }

  /** Hashes `secret` with the current pepper. */
  async hash(secret: string): Promise<HashedSecret> {
    const key = await this.#key(this.currentVersion);
    const signature = await crypto.subtle.sign("HMAC", key, utf8(secret));
    return { hash: toBase64Url(new Uint8Array(signature)), pepperVersion: this.currentVersion };
  }

  /**
   * Whether `secret` hashes to `expectedHash` under `pepperVersion` and
   * `scheme` (default `hmac-sha256`), compared in constant time. An unknown
   * version, scheme or a malformed hash does the same work (one HMAC
   * verification against a dummy signature, the same awaits) and returns
   * false.
   */
  verify(
    secret: string,
    expectedHash: string,
    pepperVersion: number,
    scheme: ApiKeyHashScheme = CURRENT_HASH_SCHEME,
  ): Promise<boolean> {
    const legacy = scheme !== CURRENT_HASH_SCHEME;
    if ((legacy || this.#digestOnEveryVerify) && loadedSha256() === undefined) {
      // The first legacy digest of the process: SHA-256 loads first (once).
      return loadSha256().then(() => this.verify(secret, expectedHash, pepperVersion, scheme));
    }
    // One base64url and one hex decode on every path (a stand-in for the one the scheme lacks),
    // and, where legacy records may be met, both legacy digests: the same work whatever the scheme.
    const expected = fromBase64Url(legacy ? DUMMY_HASH : expectedHash);
    const legacyMatches = legacy || this.#digestOnEveryVerify
      ? this.#legacyMatch(secret, legacy ? expectedHash : DUMMY_HEX, pepperVersion, scheme)
      : false;
    if (legacy) {
      return this.#compare(secret, DUMMY_SIGNATURE, this.currentVersion, legacyMatches, true);
    }
    const known = expected !== null && this.#peppers.has(pepperVersion);
    return this.#compare(
      secret,
      expected ?? DUMMY_SIGNATURE,
      known ? pepperVersion : this.currentVersion,
      known,
      false,
    );
  }

  /**
   * The legacy comparison against the hex `expectedHash`, in constant time.
   * Every call makes both legacy digests, of the secret alone (`sha256`) and
   * of the secret and a pepper (`sha256-pepper`; the longest pepper stands in
   * for an unknown one), compressing as many blocks as with the longest
   * pepper, then compares the one of `scheme`: a wrong secret costs the same
   * on either scheme as on none (an unknown prefix).
   */
  #legacyMatch(
    secret: string,
    expectedHash: string,
    pepperVersion: number,
    scheme: ApiKeyHashScheme,
  ): boolean {
    const data = utf8(secret);
    const expected = fromHex(expectedHash);
    const pepper = scheme === "sha256-pepper" ? this.#pepperBytes.get(pepperVersion) : undefined;
    const sha256 = loadedSha256()!;
    const plain = sha256.create().update(data).digest();
    const peppered = legacyDigest(
      sha256,
      data,
      pepper ?? this.#longestPepper,
      this.#longestPepper.length,
    );
    const known = scheme === "sha256" ? pepperVersion === 0 : pepper !== undefined;
    const digest = scheme === "sha256" ? plain : peppered;
    return digestsEqual(digest, expected ?? ZERO_DIGEST) && known && expected !== null;
  }

  /**
   * Does the work of a real verify against nothing, step for step (it is one,
   * against a hash of no configured version); always false.
   */
  dummyVerify(secret: string): Promise<boolean> {
    return this.verify(secret, DUMMY_HASH, 0);
  }

  /**
   * The HMAC verification of `secret` against `signature`: its answer and'ed
   * with `real`, or `real` alone when `settled` (a legacy comparison already
   * decided, the verification only keeps the work alike).
   */
  #compare(
    secret: string,
    signature: Uint8Array<ArrayBuffer>,
    version: number,
    real: boolean,
    settled: boolean,
  ): Promise<boolean> {
    const data = utf8(secret);
    const key = this.#imported.get(version);
    const verified = key !== undefined
      ? crypto.subtle.verify("HMAC", key, signature, data)
      : this.#key(version).then((k) => crypto.subtle.verify("HMAC", k, signature, data));
    return verified.then((ok) => (ok || settled) && real);
  }
}
