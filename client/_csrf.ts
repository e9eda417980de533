/**
 * The admin routes' CSRF header: its default, which the handler requires, the
 * element sends and the OpenAPI document declares, and the `csrf` option
 * read the same way by the handler and `applyApiKeysAdminRoutes`.
 * Zero-dependency.
 *
 * @module
 */

/** The default CSRF header of the admin routes' state-changing requests: name and value. */
export const CSRF_HEADER: readonly [string, string] = ["X-Requested-With", "api-keys-manager"];

/** The methods that need the CSRF header. */
export const CSRF_METHODS: ReadonlySet<string> = new Set(["POST", "PATCH", "DELETE"]);

const HEADER_NAME = /^[A-Za-z0-9-]{1,64}$/;
/** Printable ASCII, spaces inside only: a value every client sends as written. */
const HEADER_VALUE = /^[!-~](?:[ -~]*[!-~])?$/;

/**
 * Names no CSRF header may have: the CORS-safelisted ones, which a cross-site
 * page sends without a preflight (the Fetch standard's, then Chromium's own
 * extras), then the forbidden ones, which a page cannot set (the method
 * overrides included; `proxy-` and `sec-` names are refused by prefix).
 */
const REFUSED_NAMES: readonly string[] = [
  "accept",
  "accept-language",
  "content-language",
  "content-type",
  "range",
  "intervention",
  "save-data",
  "device-memory",
  "dpr",
  "width",
  "viewport-width",
  "x-devtools-emulate-network-conditions-client-id",
  "accept-charset",
  "accept-encoding",
  "access-control-request-headers",
  "access-control-request-method",
  "connection",
  "content-length",
  "cookie",
  "cookie2",
  "date",
  "dnt",
  "expect",
  "host",
  "keep-alive",
  "origin",
  "referer",
  "set-cookie",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "via",
  "x-http-method",
  "x-http-method-override",
  "x-method-override",
];

/**
 * The `csrf` option read: the header (lower case) and value required, or
 * `null` with `false` (the check off). A bad option throws a `TypeError`: a
 * name a cross-site page sends without a preflight or a page cannot set
 * (`REFUSED_NAMES`), or a value not printable ASCII.
 *
 * @example
 * ```ts
 * import { csrfOf } from "./_csrf.ts";
 * csrfOf(undefined); // { header: "x-requested-with", value: "api-keys-manager" }
 * csrfOf(false); // null
 * ```
 */
export function csrfOf(
  value: { header?: string; value?: string } | false | undefined,
): { header: string; value: string } | null {
  if (value === false) return null;
  const header = value?.header ?? CSRF_HEADER[0];
  const expected = value?.value ?? CSRF_HEADER[1];
  const name = typeof header === "string" ? header.toLowerCase() : "";
  if (
    !HEADER_NAME.test(name) || REFUSED_NAMES.includes(name) || /^(?:proxy|sec)-/.test(name) ||
    typeof expected !== "string" || !HEADER_VALUE.test(expected)
  ) {
    throw new TypeError(
      "options.csrf must be false or { header, value }: a custom header name (not CORS-safelisted " +
        "nor forbidden) and a printable ASCII value",
    );
  }
  return { header: name, value: expected };
}
