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

/**
 * The `csrf` option read: the header (lower case) and value required, or
 * `null` with `false` (the check off). A bad option throws a `TypeError`.
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
  if (typeof header !== "string" || !HEADER_NAME.test(header) || typeof expected !== "string") {
    throw new TypeError("options.csrf must be false or { header, value } with a header name");
  }
  return { header: header.toLowerCase(), value: expected };
}
