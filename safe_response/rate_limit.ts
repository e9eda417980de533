/**
 * Reading rate-limit response headers (`X-RateLimit-*`, the IETF `RateLimit` fields) into `meta.rateLimit`.
 * @module
 */
import type { RateLimitMeta } from "../client/types.ts";
import type { RateLimitOptions } from "./options.ts";
import { isCount } from "../client/_decimal.ts";
import { headerCount, parseRetryAfter } from "../client/_retry_after.ts";
import {
  RATE_LIMIT_FIELD,
  RATE_LIMIT_POLICY_FIELD,
} from "../api_keys/metering/_rate_limit_fields.ts";
import {
  type BareItem,
  MAX_FIELD_LENGTH,
  type Member,
  parseDictionary,
  parseList,
} from "./_structured_fields.ts";

export { parseRetryAfter };

/** Default header prefix (`X-RateLimit-Limit`, `-Remaining`, `-Reset`). */
export const DEFAULT_RATE_LIMIT_HEADER_PREFIX = "X-RateLimit";

/** Reads one response header by name (a string, a number, a list or nothing). */
export type HeaderReader = (name: string) => unknown;

/** What the headers say; an unknown field is `undefined`. */
interface RateLimitFields {
  limit?: number;
  remaining?: number;
  reset?: number;
}

/** The one convention of `meta.rateLimit`: unknown fields are 0, an unknown `reset` `Retry-After`. */
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
    limit: headerCount(read(`${prefix}-Limit`)),
    remaining: headerCount(read(`${prefix}-Remaining`)),
    reset: headerCount(read(`${prefix}-Reset`)),
  };
  return Object.values(fields).some((value) => value !== undefined) ? fields : undefined;
}

/**
 * Mirrors `{prefix}-Limit`, `-Remaining`, `-Reset` and `Retry-After` into a {@link RateLimitMeta},
 * or `undefined` when none is set.
 * @example
 * ```ts
 * import { parseRateLimitHeaders } from "@saferoute/api-kit/safe-response";
 * const headers = new Headers({ "X-RateLimit-Limit": "10", "X-RateLimit-Remaining": "9" });
 * parseRateLimitHeaders((name) => headers.get(name) ?? undefined); // { limit: 10, remaining: 9, reset: 0 }
 * ```
 */
export function parseRateLimitHeaders(
  read: HeaderReader,
  prefix: string = DEFAULT_RATE_LIMIT_HEADER_PREFIX,
  now: number = Date.now(),
): RateLimitMeta | undefined {
  return rateLimitMeta(prefixedFields(read, prefix), parseRetryAfter(read("Retry-After"), now));
}

/** The text of a structured field (field lines joined with `", "`), or `undefined` when too long. */
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

/** Drafts -08 to -11: the item with the smallest `r`, its `t`, and its policy's `q`. */
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
  const text = fieldText(read(RATE_LIMIT_POLICY_FIELD));
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
  const text = fieldText(read(RATE_LIMIT_FIELD));
  if (text === undefined) return undefined;
  const list = parseList(text);
  return list === undefined ? dictionaryFields(text) : itemListFields(list, read);
}

/**
 * Mirrors the IETF `RateLimit`/`RateLimit-Policy` fields (drafts -07 to -11) and `Retry-After`
 * into a {@link RateLimitMeta}: of several policies, the one with the least remaining. A field
 * that does not parse, or is over 4096 characters, is ignored. Never throws.
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
 * What the `rateLimit` option mirrors: `{prefix}-*`, else with `standard: true` the IETF fields,
 * and `Retry-After`; given the response's `status`, `Retry-After` alone counts only on a 429.
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
  status?: number,
): RateLimitMeta | undefined {
  const prefixed = prefixedFields(read, options.headerPrefix ?? DEFAULT_RATE_LIMIT_HEADER_PREFIX);
  const fields = prefixed ?? (options.standard === true ? standardFields(read) : undefined);
  // Alone, Retry-After is a rate limit only on a 429 (a 503's or a 202's says when to come back).
  if (fields === undefined && status !== undefined && status !== 429) return undefined;
  return rateLimitMeta(fields, parseRetryAfter(read("Retry-After"), now));
}
