/**
 * RFC 8288 `Link` values, and the one way this library appends them to an existing `Link`.
 * @module
 */

/** Where pagination links go: the body only (`false`), also a `Link` header (`true`), or `"only"` the header. */
export type LinkHeaderOption = boolean | "only";

/** RFC 3986 Appendix B: scheme, authority, path, query and fragment of a URI reference. */
export const URI_PARTS = /^(?:([^:/?#]+):)?(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/;

/**
 * The authority of the URI reference `value` (after `scheme://` or a leading `//`) and where it
 * ends, or `undefined` when it has none (RFC 3986 Appendix B).
 */
function uriAuthority(value: string): { authority: string; end: number } | undefined {
  const [, scheme, authority] = URI_PARTS.exec(value)!;
  if (authority === undefined) return undefined;
  return { authority, end: (scheme === undefined ? 0 : scheme.length + 1) + 2 + authority.length };
}

/** RFC 3986 characters besides ALPHA and DIGIT: unreserved marks, sub-delims, `:/?#@` (`%`, `[`, `]` apart). */
const URI_MARKS = "-._~!$&'()*+,;=:/?#@";

/** Whether `code` (a UTF-16 unit) may sit in an RFC 3986 URI reference as it is (`%` apart). */
function isUriChar(code: number): boolean {
  return (code >= 0x30 && code <= 0x39) || ((code | 0x20) >= 0x61 && (code | 0x20) <= 0x7a) ||
    (code < 0x80 && URI_MARKS.includes(String.fromCharCode(code)));
}

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

/** Whether `uri` has a userinfo part (`user:password@` before the host). */
export function hasUserinfo(uri: string): boolean {
  return uriAuthority(uri)?.authority.includes("@") ?? false;
}

/** `String.prototype.toWellFormed` (ES2024: Node 20+, Deno, Bun), which the npm build's ES2023 types lack. */
type WellFormed = { toWellFormed(): string };

const isHex = (code: number) =>
  (code >= 0x30 && code <= 0x39) || ((code | 0x20) >= 0x61 && (code | 0x20) <= 0x66);

/**
 * `uri` as an RFC 3986 URI reference: every other character percent-encoded
 * (as UTF-8; a lone surrogate as U+FFFD), a `%` not starting `%HH` as `%25`,
 * `[` and `]` kept only in the authority (an IP literal). One linear pass: runs
 * kept are copied whole, each run to encode is encoded at once.
 */
function headerSafeUri(uri: string): string {
  const hostEnd = uriAuthority(uri)?.end ?? 0;
  const kept = (index: number) => {
    const code = uri.charCodeAt(index);
    return isUriChar(code) ||
      (code === 0x25 && isHex(uri.charCodeAt(index + 1)) && isHex(uri.charCodeAt(index + 2))) ||
      ((code === 0x5b || code === 0x5d) && index < hostEnd);
  };
  const parts: string[] = [];
  let from = 0;
  let index = 0;
  while (index < uri.length) {
    if (kept(index)) {
      index++;
      continue;
    }
    let end = index + 1;
    while (end < uri.length && !kept(end)) end++;
    // encodeURIComponent encodes every character of such a run (none is an unreserved mark).
    const run = (uri.slice(index, end) as unknown as WellFormed).toWellFormed();
    parts.push(uri.slice(from, index), encodeURIComponent(run));
    from = index = end;
  }
  parts.push(uri.slice(from));
  return parts.join("");
}

/**
 * One RFC 8288 link-value, the relation name quoted: `<uri>; rel="rel"`.
 * Characters an RFC 3986 URI reference cannot hold are percent-encoded.
 */
export function linkValue(uri: string, rel: string): string {
  return `<${headerSafeUri(uri)}>; rel="${rel}"`;
}

/** One link of a `Link` value: its URI reference as written and its relation types (lower case). */
interface ParsedLink {
  uri: string;
  rels: string[];
}

/** Links read from one `Link` value at most (the rest are not looked at). */
const MAX_PARSED_LINKS = 100;

/**
 * The links of a `Link` value, in one linear pass: `<uri>` then `;`
 * parameters up to a `,` outside a quoted string; the first `rel` (quoted or
 * not, case-insensitive) gives the relation types. Malformed text between
 * links is skipped; at most {@link MAX_PARSED_LINKS} links.
 */
export function parseLinks(value: string): ParsedLink[] {
  const links: ParsedLink[] = [];
  let index = 0;
  while (links.length < MAX_PARSED_LINKS) {
    const open = value.indexOf("<", index);
    const close = open === -1 ? -1 : value.indexOf(">", open + 1);
    if (close === -1) break;
    const link: ParsedLink = { uri: value.slice(open + 1, close), rels: [] };
    let rel: string | undefined;
    index = close + 1;
    // Parameters: `; name[=token or "quoted"]`, until a `,` between links
    while (index < value.length && value[index] !== ",") {
      if (value[index] !== ";") {
        index++;
        continue;
      }
      const name = /^;\s*([^=;,\s]*)\s*/.exec(value.slice(index, index + 64))!;
      index += name[0].length;
      let param = "";
      if (value[index] === "=") {
        index++;
        while (value[index] === " " || value[index] === "\t") index++;
        if (value[index] === '"') {
          for (index++; index < value.length && value[index] !== '"'; index++) {
            if (value[index] === "\\") index++;
            param += value[index] ?? "";
          }
          index++;
        } else {
          while (index < value.length && !";,".includes(value[index]!)) param += value[index++];
        }
      }
      if (rel === undefined && name[1]!.toLowerCase() === "rel") rel = param;
    }
    link.rels = (rel ?? "").toLowerCase().split(/\s+/).filter((type) => type !== "");
    links.push(link);
  }
  return links;
}

/** Relations a response may carry several links of: a library one is skipped only for the same URI. */
const SHARED_RELATIONS = new Set(["deprecation", "sunset"]);

/**
 * The `Link` value to set when adding `values` (one link-value each):
 * `existing` (what the response already carries: one value or several lines;
 * anything else counts as none), then each of `values` whose relation it
 * does not already have (the handler's link wins; for `deprecation` and
 * `sunset`, only a link with the same URI and relation). `undefined` when
 * `values` is empty (leave the header alone).
 */
export function appendLinks(existing: unknown, values: readonly string[]): string | undefined {
  if (values.length === 0) return undefined;
  const lines = Array.isArray(existing) ? existing : [existing];
  const parts = lines.filter((line): line is string => typeof line === "string" && line !== "");
  const present = parseLinks(parts.join(", "));
  for (const value of values) {
    const [added] = parseLinks(value);
    const taken = added !== undefined &&
      added.rels.some((rel) =>
        present.some((link) =>
          link.rels.includes(rel) && (!SHARED_RELATIONS.has(rel) || link.uri === added.uri)
        )
      );
    if (!taken) parts.push(value);
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
