/**
 * The header rules: reading the raw key from request headers, framework-neutral.
 * `ApiKeysService.authorizeRequest` applies them; bindings call that.
 *
 * @module
 */
import { type ApiKeyError, apiKeyError } from "./errors.ts";
import { compileKeyLayouts, type KeyLayouts, type LegacyKeyLayout } from "./key_format.ts";

/**
 * Reads one request header by lower-case name: a string, several values (one
 * per header line), or `undefined`/`null` when absent. Fits Node's
 * `headersDistinct`, a plain object, and Fetch `Headers` (`headers.get(name)`,
 * which joins repeated lines with `", "`).
 */
export type ApiKeyHeaderReader = (name: string) => string | string[] | null | undefined;

const BEARER = /^bearer[ \t]+(\S+)[ \t]*$/i;

function malformed(reason: string): ApiKeyError {
  return apiKeyError("api_key_malformed", reason);
}

/**
 * Every non-blank value of a header. Values are also split on commas, because
 * HTTP stacks join repeated headers with ", " (and neither keys nor Bearer
 * tokens contain commas).
 */
function valuesOf(header: string | string[] | null | undefined): string[] {
  if (header === undefined || header === null) return [];
  const values: string[] = [];
  for (const line of typeof header === "string" ? [header] : header) {
    for (const part of line.includes(",") ? line.split(",") : [line]) {
      const value = part.trim();
      if (value !== "") values.push(value);
    }
  }
  return values;
}

/** The one `X-API-Key` value, `undefined` when absent or blank. */
function keyHeader(
  header: string | string[] | null | undefined,
  layouts: KeyLayouts,
): string | undefined {
  let found: string | undefined;
  for (const value of valuesOf(header)) {
    if (value.length > layouts.maxLength) throw malformed("X-API-Key is too long");
    if (found !== undefined && found !== value) throw malformed("X-API-Key has several values");
    found = value;
  }
  return found;
}

/** The one key-shaped `Authorization: Bearer` token, `undefined` when there is none. */
function bearerKey(
  header: string | string[] | null | undefined,
  layouts: KeyLayouts,
): string | undefined {
  let found: string | undefined;
  for (const value of valuesOf(header)) {
    // "Bearer ", a key and a little whitespace at most; anything longer (e.g. a JWT) is no key.
    if (value.length > layouts.maxLength + 16) continue;
    const token = BEARER.exec(value)?.[1];
    if (token === undefined || !layouts.hasLayout(token)) continue;
    if (found !== undefined && found !== token) throw malformed("Authorization has several keys");
    found = token;
  }
  return found;
}

/** Why a bare key in `Authorization` (0.1 of `@nestarc/api-keys` read it) is refused. */
const BARE_KEY = "Authorization carries a key without a scheme: send " +
  "`Authorization: Bearer <key>` or `X-API-Key: <key>`";

/** Whether a value of `Authorization` is a key of an accepted layout without a scheme. */
function hasBareKey(header: string | string[] | null | undefined, layouts: KeyLayouts): boolean {
  return valuesOf(header).some((value) => layouts.hasLayout(value));
}

/** Options of `extractApiKey`. */
export interface ExtractApiKeyOptions {
  /** Legacy layouts accepted besides the current one (the service's `legacyKeyLayouts`). */
  legacyKeyLayouts?: readonly LegacyKeyLayout[];
}

/**
 * The header rules with compiled layouts: what `extractApiKey` does, and what
 * `ApiKeysService.authorizeRequest` calls with the service's layouts.
 * Internal: not exported by the entry point.
 */
export function extractApiKeyWith(
  getHeader: ApiKeyHeaderReader,
  layouts: KeyLayouts,
): string | undefined {
  const fromKeyHeader = keyHeader(getHeader("x-api-key"), layouts);
  const authorization = getHeader("authorization");
  const fromBearer = bearerKey(authorization, layouts);
  if (fromKeyHeader !== undefined && fromBearer !== undefined && fromKeyHeader !== fromBearer) {
    throw malformed("X-API-Key and Authorization carry different keys");
  }
  const key = fromKeyHeader ?? fromBearer;
  if (key === undefined && hasBareKey(authorization, layouts)) throw malformed(BARE_KEY);
  return key;
}

/**
 * Extracts the raw API key from `X-API-Key` or `Authorization: Bearer`, or
 * `undefined` (`ApiKeysService.authorizeRequest` applies these rules itself).
 * A Bearer token counts only in a key layout, so a JWT can travel beside a
 * key. Two different keys, differing values of one header, an over-long
 * `X-API-Key`, or, with no key otherwise, a key in `Authorization` without
 * the `Bearer` scheme throw `ApiKeyError("api_key_malformed")` with a `reason`
 * naming the rule (never the key); an invalid layout throws a `TypeError`.
 *
 * @example
 * ```ts
 * import { extractApiKey } from "@saferoute/api-kit/api-keys";
 * const headers: Record<string, string> = {
 *   authorization: "Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig",
 *   "x-api-key": "ak_live_...",
 * };
 * const key = extractApiKey((name) => headers[name]); // "ak_live_..."
 * ```
 */
export function extractApiKey(
  getHeader: ApiKeyHeaderReader,
  options?: ExtractApiKeyOptions,
): string | undefined {
  return extractApiKeyWith(
    getHeader,
    compileKeyLayouts(options?.legacyKeyLayouts, "ExtractApiKeyOptions.legacyKeyLayouts"),
  );
}
