/**
 * Reading rate-limit response headers into `meta.rateLimit`: the
 * `X-RateLimit-*` family (as `@nestjs/throttler` sets it) and the IETF
 * `RateLimit`/`RateLimit-Policy` fields (draft-ietf-httpapi-ratelimit-headers).
 *
 * @module
 */
import type { RateLimitMeta } from "../client/types.ts";
import type { RateLimitOptions } from "./options.ts";
import { decimalCount, isCount } from "./_decimal.ts";
import {
  type BareItem,
  MAX_FIELD_LENGTH,
  type Member,
  parseDictionary,
  parseList,
} from "./_structured_fields.ts";

/**
 * Default header prefix: `X-RateLimit-Limit`, `X-RateLimit-Remaining`,
 * `X-RateLimit-Reset`.
 * @example
 * ```ts
 * import { DEFAULT_RATE_LIMIT_HEADER_PREFIX } from "@saferoute/api-kit/safe-response";
 * DEFAULT_RATE_LIMIT_HEADER_PREFIX; // "X-RateLimit"
 * ```
 */
export const DEFAULT_RATE_LIMIT_HEADER_PREFIX = "X-RateLimit";

/**
 * Reads one response header by name (a string, a number, a list or nothing).
 * @example
 * ```ts
 * import type { HeaderReader } from "@saferoute/api-kit/safe-response";
 * const headers = new Headers({ "X-RateLimit-Limit": "10" });
 * const read: HeaderReader = (name) => headers.get(name) ?? undefined;
 * ```
 */
export type HeaderReader = (name: string) => unknown;

/** Longest header value read as a count or an HTTP-date; a longer one is absent. */
const MAX_VALUE_LENGTH = 64;

/** The first value of a header (a list's first line). */
const firstOf = (value: unknown): unknown => Array.isArray(value) ? value[0] : value;

/** A count header: a safe non-negative integer, else `undefined`. */
function toCount(value: unknown): number | undefined {
  const first = firstOf(value);
  if (typeof first === "number") return isCount(first, 0) ? first : undefined;
  if (typeof first !== "string" || first.length > MAX_VALUE_LENGTH) return undefined;
  return decimalCount(first.trim());
}

/**
 * Seconds to wait from a `Retry-After` value: delay-seconds, or an HTTP-date
 * converted against `now` (never negative).
 */
export function parseRetryAfter(value: unknown, now: number = Date.now()): number | undefined {
  const seconds = toCount(value);
  if (seconds !== undefined) return seconds;
  const first = firstOf(value);
  if (typeof first !== "string" || first.length > MAX_VALUE_LENGTH) return undefined;
  const at = Date.parse(first);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/** What the headers say; an unknown field is `undefined`. */
interface RateLimitFields {
  limit?: number;
  remaining?: number;
  reset?: number;
}

/**
 * The one convention of `meta.rateLimit`: `undefined` when nothing is known;
 * else an unknown `limit` or `remaining` is 0, and an unknown `reset` is
 * `Retry-After`, else 0.
 */
function rateLimitMeta(
  fields: RateLimitFields | undefined,
  retryAfter: number | undefined,
): RateLimitMeta | undefined {
  if (fields === undefined && retryAfter === undefined) return undefined;
  const meta: RateLimitMeta = {
    limit: fields?.limit ?? 0,
    remaining: fields?.remaining ?? 0,
    reset: fields?.reset ?? retryAfter ?? 0,
  };
  if (retryAfter !== undefined) meta.retryAfter = retryAfter;
  return meta;
}

function prefixedFields(read: HeaderReader, prefix: string): RateLimitFields | undefined {
  const fields = {
    limit: toCount(read(`${prefix}-Limit`)),
    remaining: toCount(read(`${prefix}-Remaining`)),
    reset: toCount(read(`${prefix}-Reset`)),
  };
  return Object.values(fields).some((value) => value !== undefined) ? fields : undefined;
}

/**
 * Mirrors `{prefix}-Limit`, `{prefix}-Remaining`, `{prefix}-Reset` and
 * `Retry-After` into a {@link RateLimitMeta}, or `undefined` when none is
 * set. On a throttled response that carries only `Retry-After` (as
 * `@nestjs/throttler` sends it), `remaining` is 0, `reset` is `retryAfter`
 * and `limit` is 0 (unknown).
 * @example
 * ```ts
 * import { parseRateLimitHeaders } from "@saferoute/api-kit/safe-response";
 * const headers = new Headers({
 *   "X-RateLimit-Limit": "10", "X-RateLimit-Remaining": "9", "X-RateLimit-Reset": "60",
 * });
 * parseRateLimitHeaders((name) => headers.get(name) ?? undefined);
 * // { limit: 10, remaining: 9, reset: 60 }
 * ```
 */
export function parseRateLimitHeaders(
  read: HeaderReader,
  prefix: string = DEFAULT_RATE_LIMIT_HEADER_PREFIX,
  now: number = Date.now(),
): RateLimitMeta | undefined {
  return rateLimitMeta(prefixedFields(read, prefix), parseRetryAfter(read("Retry-After"), now));
}

/**
 * The text of a structured field: a string, or several field lines joined
 * with `", "` (RFC 9651); anything else, or a value longer than the parser's
 * bound, is absent.
 */
function fieldText(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (!Array.isArray(value) || value.length === 0) return undefined;
  let text = "";
  for (const line of value) {
    if (typeof line !== "string" || text.length + line.length > MAX_FIELD_LENGTH) return undefined;
    text = text === "" ? line : `${text}, ${line}`;
  }
  return text;
}

/** A non-negative Integer. */
function integer(item: BareItem | undefined): number | undefined {
  return item?.type === "integer" && isCount(item.value, 0) ? item.value + 0 : undefined; // -0 is 0
}

/** A policy name: a String (drafts -08 to -11), or a Token. */
function policyName(item: BareItem): string | undefined {
  return item.type === "string" || item.type === "token" ? item.value : undefined;
}

/**
 * `RateLimit` and `RateLimit-Policy` of drafts -08 to -11 (item lists): the
 * state item with the smallest `r`, its `t`, and the `q` of the policy of its
 * name. Items that are not `name;r=<n>` are ignored.
 */
function itemListFields(
  state: Member[],
  read: HeaderReader,
): RateLimitFields | undefined {
  let best: { name: string; remaining: number; reset?: number } | undefined;
  for (const member of state) {
    if (member.items !== undefined) continue;
    const name = policyName(member.item);
    const remaining = integer(member.params.get("r"));
    if (name === undefined || remaining === undefined) continue;
    if (best === undefined || remaining < best.remaining) {
      best = { name, remaining, reset: integer(member.params.get("t")) };
    }
  }
  if (best === undefined) return undefined;
  const text = fieldText(read("RateLimit-Policy"));
  const policy = (text === undefined ? undefined : parseList(text))?.find((member) =>
    member.items === undefined && policyName(member.item) === best.name
  );
  return { limit: integer(policy?.params.get("q")), remaining: best.remaining, reset: best.reset };
}

/** `RateLimit` of draft -07 (a dictionary): its `limit`, `remaining` and `reset`. */
function dictionaryFields(text: string): RateLimitFields | undefined {
  const dictionary = parseDictionary(text);
  if (dictionary === undefined) return undefined;
  const read = (key: string) => {
    const member = dictionary.get(key);
    return member?.items === undefined ? integer(member?.item) : undefined;
  };
  const fields = { limit: read("limit"), remaining: read("remaining"), reset: read("reset") };
  return Object.values(fields).some((value) => value !== undefined) ? fields : undefined;
}

function standardFields(read: HeaderReader): RateLimitFields | undefined {
  const text = fieldText(read("RateLimit"));
  if (text === undefined) return undefined;
  const list = parseList(text);
  return list === undefined ? dictionaryFields(text) : itemListFields(list, read);
}

/**
 * Mirrors the IETF `RateLimit` and `RateLimit-Policy` fields
 * (draft-ietf-httpapi-ratelimit-headers) and `Retry-After` into a
 * {@link RateLimitMeta}, or `undefined` when none says anything.
 *
 * Two syntaxes are read. Drafts -08 to -11 (RFC 9651 lists of items):
 * `RateLimit: "burst";r=50;t=30` and `RateLimit-Policy: "burst";q=100;w=60`;
 * of the `RateLimit` items, the one with the smallest remaining `r` is
 * taken: `remaining` is its `r`, `reset` its `t` (seconds), `limit` the `q`
 * of the `RateLimit-Policy` item of the same name (the first one); `w`, `qu`,
 * `pk` and unknown parameters are ignored, and so is an item without a
 * String (or Token) name and a non-negative Integer `r`. Draft -07 (a
 * dictionary): `RateLimit: limit=100, remaining=50, reset=30` (its
 * `RateLimit-Policy: 100;w=60` adds nothing the dictionary lacks). As for
 * `X-RateLimit-*`, an unknown `limit` is 0 and an unknown `reset` falls back
 * to `Retry-After`, else 0.
 *
 * A field that does not parse as an RFC 9651 structured field, or is longer
 * than 4096 characters, is ignored (RFC 9651). No value makes it throw;
 * parsing is linear in the field's length.
 * @example
 * ```ts
 * import { parseStandardRateLimitHeaders } from "@saferoute/api-kit/safe-response";
 * const headers = new Headers({
 *   "RateLimit": '"burst";r=50;t=30, "day";r=900;t=3600',
 *   "RateLimit-Policy": '"burst";q=100;w=60, "day";q=1000;w=86400',
 * });
 * parseStandardRateLimitHeaders((name) => headers.get(name) ?? undefined);
 * // { limit: 100, remaining: 50, reset: 30 }
 * ```
 */
export function parseStandardRateLimitHeaders(
  read: HeaderReader,
  now: number = Date.now(),
): RateLimitMeta | undefined {
  return rateLimitMeta(standardFields(read), parseRetryAfter(read("Retry-After"), now));
}

/**
 * What the `rateLimit` option mirrors: `{prefix}-*` (see
 * {@link parseRateLimitHeaders}); with `standard: true`, when none of
 * `{prefix}-Limit`, `-Remaining`, `-Reset` is set, the IETF fields (see
 * {@link parseStandardRateLimitHeaders}). `X-RateLimit-*` wins when both are
 * present.
 * @example
 * ```ts
 * import { readRateLimitHeaders } from "@saferoute/api-kit/safe-response";
 * const headers = new Headers({ "RateLimit": '"p";r=4;t=9', "RateLimit-Policy": '"p";q=5' });
 * readRateLimitHeaders((name) => headers.get(name) ?? undefined, { standard: true });
 * // { limit: 5, remaining: 4, reset: 9 }
 * ```
 */
export function readRateLimitHeaders(
  read: HeaderReader,
  options: RateLimitOptions = {},
  now: number = Date.now(),
): RateLimitMeta | undefined {
  const prefixed = prefixedFields(read, options.headerPrefix ?? DEFAULT_RATE_LIMIT_HEADER_PREFIX);
  const fields = prefixed ?? (options.standard === true ? standardFields(read) : undefined);
  return rateLimitMeta(fields, parseRetryAfter(read("Retry-After"), now));
}
