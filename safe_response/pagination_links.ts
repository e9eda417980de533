/**
 * Relative navigation links of paginated responses. Links are built from the
 * request target's path and query only (never the `Host` header, nor the
 * authority of an absolute-form target), keep the other query parameters (at
 * most 20 of them and 1,000 characters, in order; none named like a credential
 * or holding an API key), and replace `page`/`limit` (offset) or
 * `cursor`/`limit` (cursor); `self` keeps the request's first `cursor` when it
 * holds no key and is at most {@link MAX_CURSOR_LENGTH} characters. No target
 * makes them throw. The same links can also be sent as an RFC 8288 `Link`
 * header ({@link paginationLinkHeader}, the `linkHeader` option).
 *
 * @module
 */
import type { PaginationLinks } from "../client/types.ts";
import { API_KEY_REDACT_REGEX } from "../api_keys/key_format.ts";
import { linkValue } from "./_link_header.ts";
import { sameOriginUrl } from "./_request_target.ts";

/** Query parameter that carries the cursor in cursor-pagination links. */
export const CURSOR_QUERY_PARAM = "cursor";

/**
 * Longest `cursor` accepted (characters): a longer one is a `PaginationQueryError`, and is not
 * echoed in a link.
 */
export const MAX_CURSOR_LENGTH = 512;

/** Other query parameters echoed at most, and their characters (`name=value` joined by `&`). */
const MAX_ECHOED_PARAMS = 20;
const MAX_ECHOED_LENGTH = 1_000;
/**
 * Names (lower case, letters and digits only) of parameters that carry credentials: these names,
 * and any name ending with one of `CREDENTIAL_ENDINGS` (`refresh_token`, `X-Amz-Signature`,
 * `session_id`, 3scale's `user_key`, Azure's `subscription-key`). Value shapes come from key_format.ts (the layouts' one home, a leaf), but only
 * the current layout's: legacy layouts are the service's option, unknown here, so the names cover
 * keys passed the usual ways.
 */
const CREDENTIAL_NAMES = new Set(["key", "auth", "sig", "pwd", "sid", "session", "cookie"]);
const CREDENTIAL_ENDINGS = [
  "token",
  "jwt",
  "secret",
  "password",
  "passwd",
  "apikey",
  "accesskey",
  "privatekey",
  "secretkey",
  "userkey",
  "subscriptionkey",
  "authkey",
  "appkey",
  "clientkey",
  "licensekey",
  "signature",
  "credential",
  "credentials",
  "authorization",
  "sessionid",
];

/** Whether a query parameter's name says it carries a credential. */
function namesCredential(name: string): boolean {
  const bare = name.toLowerCase().replace(/[^a-z0-9]/g, "");
  return CREDENTIAL_NAMES.has(bare) || CREDENTIAL_ENDINGS.some((end) => bare.endsWith(end));
}

/** Whether a query parameter holds an API key (in its name, its value or across both). */
const holdsApiKey = (name: string, value: string) => API_KEY_REDACT_REGEX.test(`${name}=${value}`);

/**
 * The query of `url` to echo, in order: of each `owned` parameter (the links replace them, but
 * `self` keeps the request's cursor) its first value, when at most {@link MAX_CURSOR_LENGTH}
 * characters and holding no key; then other parameters within the bounds.
 */
function echoedQuery(url: URL, owned: readonly string[]): URLSearchParams {
  const kept = new URLSearchParams();
  const seen = new Set<string>();
  let count = 0;
  let length = 0;
  for (const [name, value] of url.searchParams) {
    if (owned.includes(name)) {
      if (!seen.has(name) && value.length <= MAX_CURSOR_LENGTH && !holdsApiKey(name, value)) {
        kept.append(name, value);
      }
      seen.add(name);
      continue;
    }
    if (count === MAX_ECHOED_PARAMS) continue;
    const pair = new URLSearchParams({ [name]: value }).toString();
    if (length + pair.length > MAX_ECHOED_LENGTH) continue;
    if (namesCredential(name)) continue;
    if (holdsApiKey(name, value)) continue;
    kept.append(name, value);
    count++;
    length += pair.length + 1;
  }
  return kept;
}

function linkBuilder(
  requestTarget: string,
  owned: readonly string[],
): (set: Record<string, string | null>) => string {
  const url = sameOriginUrl(requestTarget);
  const path = url.pathname;
  const echoed = echoedQuery(url, owned);
  return (set) => {
    const query = new URLSearchParams(echoed);
    for (const [name, value] of Object.entries(set)) {
      if (value === null) query.delete(name);
      else query.set(name, value);
    }
    const search = query.toString();
    return search === "" ? path : `${path}?${search}`;
  };
}

/**
 * Links of an offset-paginated response.
 * @example
 * ```ts
 * import { offsetPaginationLinks } from "@saferoute/api-kit/safe-response";
 * const links = offsetPaginationLinks("/items?q=a%20b&page=2", 2, 10, 3);
 * links.next; // "/items?q=a+b&page=3&limit=10"
 * links.prev; // "/items?q=a+b&page=1&limit=10"
 * ```
 */
export function offsetPaginationLinks(
  requestTarget: string,
  page: number,
  limit: number,
  totalPages: number,
): PaginationLinks {
  const link = linkBuilder(requestTarget, ["page", "limit"]);
  const to = (target: number) => link({ page: String(target), limit: String(limit) });
  return {
    self: to(page),
    first: to(1),
    prev: page > 1 ? to(page - 1) : null,
    next: page < totalPages ? to(page + 1) : null,
    last: to(Math.max(totalPages, 1)),
  };
}

/** Links of a cursor-paginated response (`last` is always `null`). */
export function cursorPaginationLinks(
  requestTarget: string,
  limit: number,
  nextCursor: string | null,
  previousCursor: string | null,
): PaginationLinks {
  const link = linkBuilder(requestTarget, [CURSOR_QUERY_PARAM, "limit"]);
  const withLimit = String(limit);
  return {
    self: link({ limit: withLimit }),
    first: link({ [CURSOR_QUERY_PARAM]: null, limit: withLimit }),
    prev: previousCursor === null
      ? null
      : link({ [CURSOR_QUERY_PARAM]: previousCursor, limit: withLimit }),
    next: nextCursor === null ? null : link({ [CURSOR_QUERY_PARAM]: nextCursor, limit: withLimit }),
    last: null,
  };
}

/** The relations of the `Link` header, in order (`self` is the request itself). */
const LINK_RELATIONS = ["first", "prev", "next", "last"] as const;

/** The RFC 8288 link-values of pagination links, one per relation of {@link paginationLinkHeader}. */
export function paginationLinkValues(links: PaginationLinks): string[] {
  return LINK_RELATIONS.flatMap((rel) => {
    const uri = links[rel];
    return typeof uri === "string" ? [linkValue(uri, rel)] : [];
  });
}

/**
 * The RFC 8288 `Link` value of pagination links: `first`, `prev`, `next` and
 * `last` (those that are not `null`), relative URIs as in the body, relation
 * names quoted. `undefined` when there is none.
 * @example
 * ```ts
 * import { offsetPaginationLinks, paginationLinkHeader } from "@saferoute/api-kit/safe-response";
 * paginationLinkHeader(offsetPaginationLinks("/items", 1, 10, 2));
 * // '</items?page=1&limit=10>; rel="first", </items?page=2&limit=10>; rel="next", '
 * // + '</items?page=2&limit=10>; rel="last"'
 * ```
 */
export function paginationLinkHeader(links: PaginationLinks): string | undefined {
  const values = paginationLinkValues(links);
  return values.length === 0 ? undefined : values.join(", ");
}
