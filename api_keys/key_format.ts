/**
 * Layouts of raw API keys, the one home of every rule about them: the current
 * layout `<namespace>_<env>_<prefix>_<secret><checksum>`, and the legacy
 * layouts a service may also accept (`LegacyKeyLayout`), which parsing,
 * redaction, the header rules and the scanner patterns all read from here.
 *
 * - `namespace`: a lowercase letter, then up to 15 lowercase letters or digits
 *   (default `ak`).
 * - `env`: `live` or `test`.
 * - `prefix`: 12 base62 characters, public, used to look the key up.
 * - `secret`: 32 base62 characters from the CSPRNG (about 190 bits).
 * - `checksum`: CRC-32 of everything before it, 6 base62 characters, so typos
 *   and garbage are rejected offline.
 *
 * @module
 */
import { BASE62_ALPHABET, encodeBase62Fixed, randomBase62 } from "./_base62.ts";
import type { Environment } from "./types.ts";

/** CRC-32 lookup table (IEEE 802.3, the zlib polynomial), built on first use (not at import). */
let crcTable: Uint32Array | undefined;

function buildCrcTable(): Uint32Array {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
}

/**
 * CRC-32 (IEEE 802.3, the zlib polynomial) of the low byte of each char code
 * of `text` (exact for ASCII), up to `end` (default: the whole text): the
 * checksum of keys. Internal: not exported by the entry point.
 */
export function crc32Ascii(text: string, end: number = text.length): number {
  const table = crcTable ??= buildCrcTable();
  let crc = 0xffffffff;
  for (let i = 0; i < end; i++) {
    crc = table[(crc ^ text.charCodeAt(i)) & 0xff] ^ (crc >>> 8);
  }
  return (crc ^ 0xffffffff) >>> 0;
}

/** Length of the public prefix. */
export const API_KEY_PREFIX_LENGTH = 12;

/** Length of the secret (32 base62 characters, about 190 bits of entropy). */
export const API_KEY_SECRET_LENGTH = 32;

/** Length of the base62 CRC-32 checksum appended to the secret. */
export const API_KEY_CHECKSUM_LENGTH = 6;

/** Default namespace of generated keys. */
export const DEFAULT_API_KEY_NAMESPACE = "ak";

/** Valid namespaces: a lowercase letter, then up to 15 lowercase letters or digits. */
export const API_KEY_NAMESPACE_PATTERN: RegExp = /^[a-z][a-z0-9]{0,15}$/;

/**
 * Length of the longest valid key (16-character namespace). Longer inputs are
 * malformed before any other work.
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
 */
export const API_KEY_REDACT_REGEX: RegExp = new RegExp(KEY_SOURCE);

/** A freshly generated key. `raw` is shown once; only a hash of `secret` is stored. */
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

/** A key parsed by `parseKey`: same fields as `GeneratedApiKey`. */
export type ParsedApiKey = GeneratedApiKey;

/** Options of `generateKey`. */
export interface GenerateKeyOptions {
  /** Environment encoded in the key. */
  environment: Environment;
  /** Namespace (default `ak`). */
  namespace?: string;
}

/** A namespace of a legacy layout (and of `@nestarc/api-keys` 0.1): 1 to 32 ASCII letters or digits. */
const LITERAL_NAMESPACE = /^[A-Za-z0-9]{1,32}$/;

/**
 * Throws a `TypeError` naming `label` unless `namespace` is valid. A namespace
 * `@nestarc/api-keys` 0.1 accepted (1 to 32 ASCII letters or digits, e.g.
 * `Acme`) gets the way to keep its old keys: the `nestarc-v0` layout spread
 * with that namespace (echoed: it matched that pattern, so it is no key).
 */
export function assertValidNamespace(namespace: unknown, label: string): void {
  if (typeof namespace !== "string" || !API_KEY_NAMESPACE_PATTERN.test(namespace)) {
    const rule =
      `${label} must be a lowercase letter followed by up to 15 lowercase letters or digits`;
    if (typeof namespace !== "string" || !LITERAL_NAMESPACE.test(namespace)) {
      throw new TypeError(rule);
    }
    throw new TypeError(
      `${rule}; to keep accepting the keys @nestarc/api-keys 0.1 issued under "${namespace}", ` +
        `set one of that form for new keys and add ` +
        `legacyKeyLayouts: [{ ...LEGACY_KEY_LAYOUTS["nestarc-v0"], namespace: "${namespace}" }]`,
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
 * Alphabets of a legacy layout's prefix and secret: `base62` (`0-9A-Za-z`),
 * `hex` (`0-9a-f`), `base64url` (`0-9A-Za-z`, `-`, `_`).
 */
export type LegacyKeyAlphabet = "base62" | "hex" | "base64url";

/**
 * A key layout of another system, described declaratively:
 * `<namespace><sep><environment><sep><prefix><sep><secret>[<checksum>]`.
 * Every segment has a fixed length once the namespace is known, so parsing
 * is one linear scan of a bounded input.
 *
 * @example
 * ```ts
 * // e.g. "sk-prod-0a1b2c3d-<40 hex>"
 * const layout: LegacyKeyLayoutDescription = {
 *   name: "acme-v1", separator: "-", namespace: "sk", environments: { live: "prod", test: "dev" },
 *   prefixLength: 8, secretLength: 40, alphabet: "hex", checksum: false,
 * };
 * ```
 */
export interface LegacyKeyLayoutDescription {
  /** Name in messages and scanner rules: 1 to 32 of `a-z`, `0-9`, `-`, starting with a letter or digit. */
  readonly name: string;
  /** Character between the segments. */
  readonly separator: "_" | "-" | ".";
  /** The namespace segment, 1 to 32 ASCII letters or digits; omitted: the service's namespace. */
  readonly namespace?: string;
  /** The environment segment's text for each environment: 1 to 8 of `a-z0-9`, different. */
  readonly environments: Readonly<{ live: string; test: string }>;
  /** Characters of the public prefix (the lookup key): 4 to 64. */
  readonly prefixLength: number;
  /** Characters of the secret: 16 to 128. */
  readonly secretLength: number;
  /** Alphabet of the prefix and the secret. */
  readonly alphabet: LegacyKeyAlphabet;
  /** Whether the secret is followed by the current layout's checksum (6 base62, CRC-32). */
  readonly checksum: boolean;
}

/**
 * Built-in legacy layouts, by name. `nestarc-v0` is the layout of
 * `@nestarc/api-keys` 0.1: `<namespace>_<live|test>_<12 base62>_<32 base62>`,
 * no checksum, with the service's namespace (spread it with a `namespace` to
 * accept another one).
 */
export const LEGACY_KEY_LAYOUTS: Readonly<Record<"nestarc-v0", LegacyKeyLayoutDescription>> = Object
  .freeze({
    "nestarc-v0": Object.freeze(
      {
        name: "nestarc-v0",
        separator: "_",
        environments: Object.freeze({ live: "live", test: "test" }),
        prefixLength: 12,
        secretLength: 32,
        alphabet: "base62",
        checksum: false,
      } as const,
    ),
  });

/**
 * A legacy layout a service (option `legacyKeyLayouts`), the redaction and the
 * scanner patterns may accept besides the current one: the name of a built-in
 * layout (`LEGACY_KEY_LAYOUTS`) or a description.
 *
 * @example
 * ```ts
 * const layouts: LegacyKeyLayout[] = ["nestarc-v0"];
 * ```
 */
export type LegacyKeyLayout = keyof typeof LEGACY_KEY_LAYOUTS | LegacyKeyLayoutDescription;

/** Characters of each alphabet and its expression. */
const ALPHABETS: Readonly<Record<LegacyKeyAlphabet, { chars: string; source: string }>> = {
  base62: { chars: BASE62_ALPHABET, source: "[0-9A-Za-z]" },
  hex: { chars: "0123456789abcdef", source: "[0-9a-f]" },
  base64url: { chars: `${BASE62_ALPHABET}-_`, source: "[0-9A-Za-z_-]" },
};
const LAYOUT_NAME = /^[a-z0-9][a-z0-9-]{0,31}$/;
const ENVIRONMENT_TOKEN = /^[a-z0-9]{1,8}$/;

/** A validated legacy layout. */
interface CompiledLegacyLayout {
  readonly name: string;
  readonly separator: string;
  readonly namespace: string | undefined;
  readonly live: string;
  readonly test: string;
  readonly prefixLength: number;
  readonly secretLength: number;
  readonly checksum: boolean;
  /** 1 for each ASCII code of the alphabet. */
  readonly members: Uint8Array;
  readonly alphabetSource: string;
  /** Longest key: the longer environment, the namespace (16 characters when omitted). */
  readonly maxLength: number;
}

function integerIn(value: unknown, min: number, max: number, label: string): number {
  if (!Number.isSafeInteger(value) || (value as number) < min || (value as number) > max) {
    throw new TypeError(`${label} must be an integer from ${min} to ${max}`);
  }
  return value as number;
}

/** Validates one entry of `legacyKeyLayouts`; a `TypeError` names the field. */
function compileLegacyLayout(entry: unknown, label: string): CompiledLegacyLayout {
  const builtIn = typeof entry === "string" && Object.hasOwn(LEGACY_KEY_LAYOUTS, entry);
  if (typeof entry === "string" && !builtIn) {
    throw new TypeError(
      `${label} is an unknown layout (known: ${Object.keys(LEGACY_KEY_LAYOUTS).join(", ")})`,
    );
  }
  const d = (builtIn ? LEGACY_KEY_LAYOUTS[entry as "nestarc-v0"] : entry) as Partial<
    Record<keyof LegacyKeyLayoutDescription, unknown>
  >;
  if (typeof d !== "object" || d === null) {
    throw new TypeError(`${label} must be a layout name or a layout description`);
  }
  if (typeof d.name !== "string" || !LAYOUT_NAME.test(d.name)) {
    throw new TypeError(`${label}.name must be 1 to 32 of a-z, 0-9 and "-"`);
  }
  if (d.separator !== "_" && d.separator !== "-" && d.separator !== ".") {
    throw new TypeError(`${label}.separator must be "_", "-" or "."`);
  }
  if (
    d.namespace !== undefined &&
    (typeof d.namespace !== "string" || !LITERAL_NAMESPACE.test(d.namespace))
  ) {
    throw new TypeError(`${label}.namespace must be 1 to 32 ASCII letters or digits`);
  }
  const environments = d.environments as { live?: unknown; test?: unknown } | undefined;
  const { live, test } = environments ?? {};
  if (
    typeof live !== "string" || typeof test !== "string" || !ENVIRONMENT_TOKEN.test(live) ||
    !ENVIRONMENT_TOKEN.test(test) || live === test
  ) {
    throw new TypeError(
      `${label}.environments must give live and test different texts of 1 to 8 of a-z0-9`,
    );
  }
  const prefixLength = integerIn(d.prefixLength, 4, 64, `${label}.prefixLength`);
  const secretLength = integerIn(d.secretLength, 16, 128, `${label}.secretLength`);
  const alphabet = ALPHABETS[d.alphabet as LegacyKeyAlphabet];
  if (!Object.hasOwn(ALPHABETS, d.alphabet as string)) {
    throw new TypeError(`${label}.alphabet must be one of ${Object.keys(ALPHABETS).join(", ")}`);
  }
  if (typeof d.checksum !== "boolean") throw new TypeError(`${label}.checksum must be a boolean`);
  const members = new Uint8Array(128);
  for (const char of alphabet.chars) members[char.charCodeAt(0)] = 1;
  const namespace = d.namespace as string | undefined;
  return Object.freeze({
    name: d.name,
    separator: d.separator,
    namespace,
    live,
    test,
    prefixLength,
    secretLength,
    checksum: d.checksum,
    members,
    alphabetSource: alphabet.source,
    maxLength: (namespace?.length ?? 16) + Math.max(live.length, test.length) + prefixLength +
      secretLength + 3 + (d.checksum ? API_KEY_CHECKSUM_LENGTH : 0),
  });
}

/** The expression of `layout`'s keys whose namespace matches `namespaceSource`. */
function legacySource(layout: CompiledLegacyLayout, namespaceSource: string): string {
  const sep = layout.separator === "." ? "\\." : layout.separator;
  const body = `${layout.alphabetSource}{${layout.secretLength}}`;
  return `${namespaceSource}${sep}(?:${layout.live}|${layout.test})${sep}` +
    `${layout.alphabetSource}{${layout.prefixLength}}${sep}${body}` +
    (layout.checksum ? `[0-9A-Za-z]{${API_KEY_CHECKSUM_LENGTH}}` : "");
}

/** Whether `text[start..end)` is all in `members`. */
function isRunOf(members: Uint8Array, text: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const code = text.charCodeAt(i);
    if (code > 0x7f || members[code] === 0) return false;
  }
  return true;
}

/** Whether the base62 checksum of `raw[end..end+6)` is the CRC-32 of `raw[0..end)`. */
function checksumHolds(raw: string, end: number): boolean {
  let checksum = 0;
  for (let i = end; i < end + API_KEY_CHECKSUM_LENGTH; i++) {
    const code = raw.charCodeAt(i);
    const value = code > 0x7f ? -1 : BASE62_VALUES[code];
    if (value < 0) return false;
    checksum = checksum * 62 + value;
  }
  return crc32Ascii(raw, end) === checksum;
}

/**
 * A key parsed by `KeyLayouts.parse`, with the name of its legacy layout
 * (absent: the current layout). Internal: not exported by the entry point.
 */
export type LayoutParsedKey = ParsedApiKey & { readonly layout?: string };

/** `raw` parsed by `layout` with namespace `namespace`, or null: one scan of fixed positions. */
function parseLegacy(
  raw: string,
  layout: CompiledLegacyLayout,
  namespace: string,
): LayoutParsedKey | null {
  const sep = layout.separator.charCodeAt(0);
  const ns = namespace.length;
  if (!raw.startsWith(namespace) || raw.charCodeAt(ns) !== sep) return null;
  const { live, test } = layout;
  const environment = raw.startsWith(live, ns + 1) && raw.charCodeAt(ns + 1 + live.length) === sep
    ? "live"
    : raw.startsWith(test, ns + 1) && raw.charCodeAt(ns + 1 + test.length) === sep
    ? "test"
    : null;
  if (environment === null) return null;
  const prefixStart = ns + 2 + (environment === "live" ? live : test).length;
  const secretStart = prefixStart + layout.prefixLength + 1;
  const secretEnd = secretStart + layout.secretLength;
  const length = secretEnd + (layout.checksum ? API_KEY_CHECKSUM_LENGTH : 0);
  if (raw.length !== length || raw.charCodeAt(secretStart - 1) !== sep) return null;
  const { members } = layout;
  if (
    !isRunOf(members, raw, prefixStart, secretStart - 1) ||
    !isRunOf(members, raw, secretStart, secretEnd) ||
    (layout.checksum && !checksumHolds(raw, secretEnd))
  ) {
    return null;
  }
  return {
    raw,
    namespace,
    environment,
    prefix: raw.slice(prefixStart, secretStart - 1),
    secret: raw.slice(secretStart, secretEnd),
    checksum: raw.slice(secretEnd),
    layout: layout.name,
  };
}

/**
 * The accepted layouts compiled once: the current one and the enabled legacy
 * ones, with what parsing, the header rules, redaction and the scanner
 * patterns need of them. Internal: not exported by the entry point; built by
 * `compileKeyLayouts`.
 */
export class KeyLayouts {
  /** The enabled legacy layouts, validated. */
  readonly legacy: readonly CompiledLegacyLayout[];
  /** Longest key of any accepted layout and any namespace: longer input is no key. */
  readonly maxLength: number;
  /** Expression of a key of any accepted layout and any namespace (no flags). */
  readonly redactSource: string;
  readonly #shape: RegExp | undefined;
  readonly #redactAll: RegExp;

  /** Layouts over the validated `legacy` ones (see `compileKeyLayouts`). */
  constructor(legacy: readonly CompiledLegacyLayout[]) {
    this.legacy = legacy;
    this.maxLength = Math.max(MAX_API_KEY_LENGTH, ...legacy.map((layout) => layout.maxLength));
    const anyNamespace = legacy.map((layout) =>
      legacySource(layout, layout.namespace ?? API_KEY_NAMESPACE_PATTERN.source.slice(1, -1))
    );
    this.redactSource = [KEY_SOURCE, ...anyNamespace].join("|");
    this.#shape = legacy.length === 0 ? undefined : new RegExp(`^(?:${anyNamespace.join("|")})$`);
    this.#redactAll = new RegExp(this.redactSource, "g");
  }

  /**
   * `raw` parsed by the first accepted layout that takes it with the
   * namespace `namespace` (a legacy layout's own namespace when it names
   * one), or `null`; bounded by `maxLength`, never throws. A legacy key
   * carries its layout's name (`layout`).
   */
  parse(raw: string, namespace: string): LayoutParsedKey | null {
    if (typeof raw !== "string" || raw.length > this.maxLength) return null;
    const current = parseKey(raw);
    if (current !== null && current.namespace === namespace) return current;
    for (const layout of this.legacy) {
      const parsed = parseLegacy(raw, layout, layout.namespace ?? namespace);
      if (parsed !== null) return parsed;
    }
    return null;
  }

  /** The enabled legacy layout named `name`, if any. */
  legacyNamed(name: string): CompiledLegacyLayout | undefined {
    return this.legacy.find((layout) => layout.name === name);
  }

  /** Whether `prefix` can be the prefix of a key of an accepted layout (its length and alphabet). */
  acceptsPrefix(prefix: string): boolean {
    return this.fitsLayout(prefix, undefined) ||
      this.legacy.some((layout) => this.fitsLayout(prefix, layout));
  }

  /**
   * Whether `prefix` can be the prefix of a key of `layout` (its length and alphabet; `undefined`:
   * the current layout).
   */
  fitsLayout(prefix: string, layout: CompiledLegacyLayout | undefined): boolean {
    if (typeof prefix !== "string") return false;
    return layout === undefined
      ? prefix.length === API_KEY_PREFIX_LENGTH && isBase62Run(prefix, 0, prefix.length)
      : prefix.length === layout.prefixLength && isRunOf(layout.members, prefix, 0, prefix.length);
  }

  /** Whether `value` has the shape of a key of any accepted layout and namespace (checksums unchecked). */
  hasLayout(value: string): boolean {
    return hasApiKeyLayout(value) ||
      (this.#shape !== undefined && value.length <= this.maxLength && this.#shape.test(value));
  }

  /** `text` with every key of any accepted layout replaced by `[REDACTED_API_KEY]`. */
  redact(text: string): string {
    return text.replace(this.#redactAll, "[REDACTED_API_KEY]");
  }

  /** Expressions of the legacy layouts' keys of namespace `namespace` (or their own), in order. */
  legacySources(namespace: string): string[] {
    return this.legacy.map((layout) => legacySource(layout, layout.namespace ?? namespace));
  }
}

const CURRENT_LAYOUT_ONLY = new KeyLayouts([]);

/**
 * Validates a `legacyKeyLayouts` option (`undefined` or an array of built-in
 * names and descriptions; a `TypeError` names `label` and the entry) and
 * compiles it with the current layout. Internal: not exported by the entry
 * point.
 */
export function compileKeyLayouts(value: unknown, label: string): KeyLayouts {
  if (value === undefined) return CURRENT_LAYOUT_ONLY;
  if (!Array.isArray(value)) throw new TypeError(`${label} must be an array`);
  if (value.length === 0) return CURRENT_LAYOUT_ONLY;
  return new KeyLayouts(value.map((entry, i) => compileLegacyLayout(entry, `${label}[${i}]`)));
}

/**
 * Options of the redaction functions: the legacy layouts to cover besides
 * the current one (the service's `legacyKeyLayouts`).
 */
export interface ApiKeyRedactionOptions {
  /** Legacy layouts to find too (default none). */
  legacyKeyLayouts?: readonly LegacyKeyLayout[];
}

/**
 * `API_KEY_REDACT_REGEX` extended with legacy layouts: matches a key of the
 * current layout or of any of `options.legacyKeyLayouts`, of any namespace
 * (a layout's own when it names one). No `g` flag. Throws a `TypeError` for
 * an invalid layout. Build it once.
 *
 * @example
 * ```ts
 * import { apiKeyRedactRegex } from "./key_format.ts";
 * const regex = apiKeyRedactRegex({ legacyKeyLayouts: ["nestarc-v0"] });
 * regex.test(`ak_live_${"A".repeat(12)}_${"b".repeat(32)}`); // true
 * ```
 */
export function apiKeyRedactRegex(options: ApiKeyRedactionOptions = {}): RegExp {
  const layouts = compileKeyLayouts(options.legacyKeyLayouts, "legacyKeyLayouts");
  return layouts === CURRENT_LAYOUT_ONLY ? API_KEY_REDACT_REGEX : new RegExp(layouts.redactSource);
}

/**
 * Replaces every key-shaped substring of `text` with `[REDACTED_API_KEY]`:
 * keys of the current layout, and of `options.legacyKeyLayouts` when given
 * (pass a service's `legacyKeyLayouts` to redact its legacy keys too).
 *
 * @example
 * ```ts
 * import { generateKey, redactApiKeys } from "./key_format.ts";
 * const { raw } = generateKey({ environment: "live" });
 * redactApiKeys(`Authorization: Bearer ${raw}`); // "Authorization: Bearer [REDACTED_API_KEY]"
 * redactApiKeys(`k=ak_live_${"A".repeat(12)}_${"b".repeat(32)}`, {
 *   legacyKeyLayouts: ["nestarc-v0"],
 * }); // "k=[REDACTED_API_KEY]"
 * ```
 */
export function redactApiKeys(text: string, options?: ApiKeyRedactionOptions): string {
  return compileKeyLayouts(options?.legacyKeyLayouts, "legacyKeyLayouts").redact(text);
}
