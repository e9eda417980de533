/**
 * Patterns for secret scanners: the exact expression of one namespace's keys,
 * rule files for gitleaks and TruffleHog, and the offline checksum check.
 *
 * @module
 */
import {
  API_KEY_CHECKSUM_LENGTH,
  API_KEY_NAMESPACE_PATTERN,
  API_KEY_PREFIX_LENGTH,
  API_KEY_REDACT_REGEX,
  API_KEY_SECRET_LENGTH,
  assertValidNamespace,
  compileKeyLayouts,
  type LegacyKeyLayout,
} from "../key_format.ts";

/** Options of `secretScanningPatterns`. */
export interface SecretScanningPatternsOptions {
  /** Namespace of the keys (the service's `namespace`, default there `ak`). */
  namespace: string;
  /** Legacy layouts to match too (the service's `legacyKeyLayouts`; default none). */
  legacyKeyLayouts?: readonly LegacyKeyLayout[];
}

/** What `secretScanningPatterns` returns. */
export interface SecretScanningPatterns {
  /**
   * The keys of the namespace (and the enabled legacy layouts) in text: group 1
   * is the key. RE2-compatible (no lookaround); no `g` flag. It requires no
   * letter or digit right after the key (so longer runs are not keys) and
   * nothing before it (a key glued to text is found; a longer namespace
   * ending in this one matches from this one on and fails `isValidChecksum`).
   */
  regex: RegExp;
  /**
   * Whether `token` is a whole key of the namespace with a correct CRC-32
   * checksum. A token of a legacy layout without a checksum is `true` when its
   * layout matches (there is nothing more to check offline). Never throws.
   */
  isValidChecksum(token: string): boolean;
  /** A gitleaks config (`gitleaks detect --config`): one rule, `secretGroup = 1`. */
  gitleaksToml: string;
  /** A TruffleHog custom-detector config (`trufflehog ... --config`). */
  trufflehogYaml: string;
}

/** The namespace part of key_format's layout expression. */
const ANY_NAMESPACE = API_KEY_NAMESPACE_PATTERN.source.slice(1, -1);
/** `_<env>_<prefix>_<secret><checksum>` of key_format's layout expression. */
const CURRENT_TAIL = API_KEY_REDACT_REGEX.source.slice(ANY_NAMESPACE.length);

/** After a key: end of text or a character that cannot continue it. */
const KEY_END = "(?:[^0-9A-Za-z]|$)";

const CHECKSUM_NOTE = [
  `The last ${API_KEY_CHECKSUM_LENGTH} characters of a key are its checksum: the CRC-32`,
  "(IEEE 802.3, the zlib polynomial) of everything before them, written as",
  `${API_KEY_CHECKSUM_LENGTH} base62 digits (0-9A-Za-z, most significant first). This tool`,
  "does not check it: confirm a finding with isValidChecksum(token) of",
];

function comment(lines: string[]): string {
  return lines.map((line) => `# ${line}`.trimEnd()).join("\n");
}

/**
 * Builds the scanner patterns of one namespace's keys, and of the legacy
 * layouts given (their expressions come from `key_format.ts`, the one home of
 * the layouts). Throws a `TypeError` for an invalid namespace or an unknown
 * or invalid legacy layout.
 *
 * @example
 * ```ts
 * import { generateKey } from "../key_format.ts";
 * import { secretScanningPatterns } from "./secret_scanning_patterns.ts";
 *
 * const patterns = secretScanningPatterns({ namespace: "acme" });
 * const { raw } = generateKey({ environment: "live", namespace: "acme" });
 * patterns.regex.exec(`API_KEY=${raw}\n`)?.[1] === raw; // true
 * patterns.isValidChecksum(raw); // true
 * console.log(patterns.gitleaksToml); // save as gitleaks.toml
 * ```
 */
export function secretScanningPatterns(
  options: SecretScanningPatternsOptions,
): SecretScanningPatterns {
  if (typeof options !== "object" || options === null) {
    throw new TypeError("SecretScanningPatternsOptions must be an object");
  }
  const namespace = options.namespace;
  assertValidNamespace(namespace, "SecretScanningPatternsOptions.namespace");
  const layouts = compileKeyLayouts(
    options.legacyKeyLayouts,
    "SecretScanningPatternsOptions.legacyKeyLayouts",
  );
  const legacy = layouts.legacy;
  const alternatives = [namespace + CURRENT_TAIL, ...layouts.legacySources(namespace)].join("|");
  const source = `(${alternatives})${KEY_END}`;
  const keywords = [
    ...new Set([
      `${namespace}_live_`,
      `${namespace}_test_`,
      ...legacy.flatMap(({ namespace: own = namespace, separator: sep, live, test }) => [
        `${own}${sep}${live}${sep}`,
        `${own}${sep}${test}${sep}`,
      ]),
    ]),
  ];
  const id = `saferoute-api-key-${namespace}`;
  const header = [
    `API keys of namespace "${namespace}" (@saferoute/api-kit):`,
    `${namespace}_<live|test>_<${API_KEY_PREFIX_LENGTH} base62 prefix>_` +
    `<${API_KEY_SECRET_LENGTH} base62 secret><${API_KEY_CHECKSUM_LENGTH} base62 checksum>.`,
    ...legacy.map((layout) =>
      `Also the legacy layout ${layout.name} (${layout.checksum ? "checksummed" : "no checksum"}).`
    ),
    ...CHECKSUM_NOTE,
    `secretScanningPatterns({ namespace: "${namespace}" }) from @saferoute/api-kit.`,
  ];
  const gitleaksToml = [
    comment(header),
    comment(["[extend] keeps gitleaks' default rules; the key is capture group 1."]),
    "",
    "[extend]",
    "useDefault = true",
    "",
    "[[rules]]",
    `id = "${id}"`,
    `description = "API key of namespace ${namespace} (@saferoute/api-kit)"`,
    `regex = '''${source}'''`,
    "secretGroup = 1",
    `keywords = [${keywords.map((keyword) => `"${keyword}"`).join(", ")}]`,
    "",
  ].join("\n");
  const trufflehogYaml = [
    comment(header),
    comment(["The key is capture group 1."]),
    "detectors:",
    `  - name: ${id}`,
    "    keywords:",
    ...keywords.map((keyword) => `      - ${keyword}`),
    "    regex:",
    `      key: '${source}'`,
    "",
  ].join("\n");
  return Object.freeze({
    regex: new RegExp(source),
    isValidChecksum(token: string): boolean {
      return layouts.parse(token, namespace) !== null;
    },
    gitleaksToml,
    trufflehogYaml,
  });
}
