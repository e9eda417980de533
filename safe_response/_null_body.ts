/**
 * The statuses whose response carries no body, one rule for every binding.
 * @module
 */

/**
 * Whether a reply with `status` carries no body: a 1xx, 204, 205 or 304 (RFC 9110 §15; the Fetch
 * standard's null body statuses are the ones of them a `Response` can have). Bindings send it with
 * no body and no `Content-Type`, its other headers kept.
 */
export function isNullBodyStatus(status: number): boolean {
  return (status >= 100 && status < 200) || status === 204 || status === 205 || status === 304;
}
