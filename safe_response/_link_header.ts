/**
 * RFC 8288 `Link` values, and the one way this library appends them to an existing `Link`.
 * @module
 */

/** Where pagination links go: the body only (`false`), also a `Link` header (`true`), or `"only"` the header. */
export type LinkHeaderOption = boolean | "only";

const encoder = new TextEncoder();

/** Characters kept as they are between `<` and `>`: visible ASCII except `"`, `<` and `>`. */
function isLinkChar(code: number): boolean {
  return code > 0x20 && code < 0x7f && code !== 0x22 && code !== 0x3c && code !== 0x3e;
}

/** Whether `uri` is non-empty and sits between `<` and `>` of a `Link` value as it is. */
export function isHeaderSafeUri(uri: string): boolean {
  for (let index = 0; index < uri.length; index++) {
    if (!isLinkChar(uri.charCodeAt(index))) return false;
  }
  return uri !== "";
}

/** `uri` with every other character percent-encoded (as UTF-8; a lone surrogate as U+FFFD). */
function headerSafeUri(uri: string): string {
  let safe = "";
  for (const char of uri) {
    if (isLinkChar(char.charCodeAt(0))) {
      safe += char;
      continue;
    }
    for (const byte of encoder.encode(char)) {
      safe += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
    }
  }
  return safe;
}

/**
 * One RFC 8288 link-value, the relation name quoted: `<uri>; rel="rel"`.
 * Characters that cannot sit in the URI reference of a header are
 * percent-encoded.
 */
export function linkValue(uri: string, rel: string): string {
  return `<${headerSafeUri(uri)}>; rel="${rel}"`;
}

/**
 * The `Link` value to set when adding `values`: `existing` (what the
 * response already carries: one value or several lines; anything else
 * counts as none), then each of `values` it does not already contain.
 * `undefined` when `values` is empty (leave the header alone).
 */
export function appendLinks(existing: unknown, values: readonly string[]): string | undefined {
  if (values.length === 0) return undefined;
  const lines = Array.isArray(existing) ? existing : [existing];
  const parts = lines.filter((line): line is string => typeof line === "string" && line !== "");
  const present = parts.join(", ");
  for (const value of values) {
    if (!present.includes(value)) parts.push(value);
  }
  return parts.join(", ");
}

/**
 * Validates a `linkHeader` option (`undefined` is `false`); otherwise throws
 * a `TypeError` starting with `where` (the decorator or option named).
 */
export function resolveLinkHeader(value: unknown, where: string): LinkHeaderOption {
  if (value === undefined) return false;
  if (typeof value === "boolean" || value === "only") return value;
  throw new TypeError(`${where} must be true, false or "only"`);
}
