/**
 * `Deprecation` (RFC 9745), `Sunset` (RFC 8594) and their `Link` values: a route's deprecation plan.
 * @module
 */
import type { DeprecationMeta } from "../client/types.ts";
import { isoInstantMs } from "../client/_instant.ts";
import { httpDateMs } from "../client/_retry_after.ts";
import { hasUserinfo, isHeaderSafeUri, linkValue } from "./_link_header.ts";
import { optionNames, refuseUnknownOptions } from "./_options.ts";

/** Options of a deprecated route. */
export interface DeprecatedOptions {
  /**
   * When the route was deprecated: a `Date`, an ISO 8601 date (UTC midnight) or date-time with
   * its offset, or an IMF-fixdate (`Fri, 01 Jan 2027 00:00:00 GMT`); whole seconds are kept.
   */
  since?: string | Date;
  /** When the route stops working (as `since`; not before it, nor before 1970 without it). */
  sunset?: string | Date;
  /** Human-readable note. */
  message?: string;
  /** URL of migration documentation (sent as `Link: <url>; rel="deprecation"`). */
  link?: string;
  /** URL of the sunset policy (sent as `Link: <url>; rel="sunset"`, RFC 8594 section 6). */
  sunsetLink?: string;
}

const OPTION_NAMES = optionNames<DeprecatedOptions>({
  since: true,
  sunset: true,
  message: true,
  link: true,
  sunsetLink: true,
});

/** A validated deprecation: the response headers and `meta.deprecation`. */
export interface DeprecationPlan {
  /** Header name and value pairs, in order (`Link` values are appended to the response's). */
  headers: ReadonlyArray<readonly [string, string]>;
  /** `meta.deprecation` (dates as ISO 8601). */
  meta: DeprecationMeta;
}

/** `value` as a date rounded down to whole seconds (what the headers carry), or a `TypeError`. */
function toDate(value: string | Date, field: string): Date {
  const ms = value instanceof Date
    ? value.getTime()
    : typeof value === "string"
    ? (/^\d{4}-/.test(value) ? isoInstantMs(value, true) : httpDateMs(value, Date.now()))
    : NaN;
  const date = new Date(Math.floor(ms / 1000) * 1000);
  const year = date.getUTCFullYear();
  // A four-digit year: an HTTP-date (IMF-fixdate) and plain ISO 8601 have no other (NaN fails too).
  if (!(year >= 0 && year <= 9999)) {
    throw new TypeError(
      `Deprecated: \`${field}\` must be a valid date (a Date, an ISO 8601 date or date-time ` +
        `with offset, or an IMF-fixdate), got ${String(value)}`,
    );
  }
  return date;
}

/**
 * RFC 9745 `Deprecation` value `@<unix seconds>` of `since` (`@0` without it).
 * @example
 * ```ts
 * import { deprecationHeaderValue } from "@saferoute/api-kit/safe-response";
 * deprecationHeaderValue(new Date("2026-01-01T00:00:00Z")); // "@1767225600"
 * ```
 */
export function deprecationHeaderValue(since?: Date): string {
  return `@${since === undefined ? 0 : Math.floor(since.getTime() / 1000)}`;
}

/**
 * RFC 8594 `Sunset` value: an IMF-fixdate HTTP-date.
 * @example
 * ```ts
 * import { sunsetHeaderValue } from "@saferoute/api-kit/safe-response";
 * sunsetHeaderValue(new Date("2027-01-01T00:00:00Z")); // "Fri, 01 Jan 2027 00:00:00 GMT"
 * ```
 */
export function sunsetHeaderValue(sunset: Date): string {
  return sunset.toUTCString();
}

/** `Link` value pointing at deprecation documentation. */
export function deprecationLinkHeaderValue(link: string): string {
  return linkValue(link, "deprecation");
}

/** Throws unless `value` is a URI that sits in a `Link` header as it is, without userinfo. */
function checkLink(value: unknown, field: string): void {
  if (value === undefined) return;
  if (typeof value !== "string" || !isHeaderSafeUri(value)) {
    throw new TypeError(
      `Deprecated: \`${field}\` must be a URI of visible ASCII without quotes or angle brackets`,
    );
  }
  if (hasUserinfo(value)) {
    throw new TypeError(`Deprecated: \`${field}\` must not carry userinfo (user:password@)`);
  }
}

/**
 * Validates deprecation options and precomputes the headers and meta (dates in whole seconds, as
 * sent). A bad date or link, or an unknown option, throws a `TypeError`, a sunset before the
 * `Deprecation` date sent (`since`, else `@0`: 1970) a `RangeError`. Without `since`, meta has no
 * `since`.
 * @example
 * ```ts
 * import { resolveDeprecation } from "@saferoute/api-kit/safe-response";
 * resolveDeprecation({ sunset: "2027-01-01T00:00:00Z" }).headers;
 * // [["Deprecation", "@0"], ["Sunset", "Fri, 01 Jan 2027 00:00:00 GMT"]]
 * ```
 */
export function resolveDeprecation(options: DeprecatedOptions = {}): DeprecationPlan {
  refuseUnknownOptions(options, OPTION_NAMES, "Deprecated");
  const since = options.since === undefined ? undefined : toDate(options.since, "since");
  const sunset = options.sunset === undefined ? undefined : toDate(options.sunset, "sunset");
  if (sunset !== undefined && sunset.getTime() < (since?.getTime() ?? 0)) {
    throw new RangeError(
      since === undefined
        ? "Deprecated: `sunset` must not be before 1970 (the `Deprecation: @0` sent without `since`)"
        : "Deprecated: `sunset` must not be before `since`",
    );
  }
  if (options.message !== undefined && typeof options.message !== "string") {
    throw new TypeError("Deprecated: `message` must be a string");
  }
  checkLink(options.link, "link");
  checkLink(options.sunsetLink, "sunsetLink");
  const headers: Array<readonly [string, string]> = [[
    "Deprecation",
    deprecationHeaderValue(since),
  ]];
  const meta: DeprecationMeta = { deprecated: true };
  if (since !== undefined) meta.since = since.toISOString();
  if (sunset !== undefined) {
    headers.push(["Sunset", sunsetHeaderValue(sunset)]);
    meta.sunset = sunset.toISOString();
  }
  if (options.message !== undefined) meta.message = options.message;
  if (options.link !== undefined) {
    headers.push(["Link", deprecationLinkHeaderValue(options.link)]);
    meta.link = options.link;
  }
  if (options.sunsetLink !== undefined) {
    headers.push(["Link", linkValue(options.sunsetLink, "sunset")]);
    meta.sunsetLink = options.sunsetLink;
  }
  return { headers: Object.freeze(headers), meta: Object.freeze(meta) };
}
