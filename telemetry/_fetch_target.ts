/**
 * The target of a Fetch request as its client sent it, for the Fetch bindings
 * of both cores. A leaf shared by both cores. Imports nothing.
 *
 * @module
 */

/**
 * The target of a Fetch `request` as its client sent it (origin form: path
 * and query). A server builds `request.url` from the Host header and the
 * target, and `Deno.serve` joins them unchecked (`http://` + Host + target): a
 * Host of `a?page=7` or `a/x` would end the URL's authority early and move
 * into its path and query. Read after the Host where the URL holds it there,
 * else the URL's own path and query.
 *
 * @example
 * ```ts
 * import { fetchRequestTarget } from "./_fetch_target.ts";
 * fetchRequestTarget(new Request("http://localhost/items?page=2")); // "/items?page=2"
 * ```
 */
export function fetchRequestTarget(request: Request): string {
  const url = request.url;
  const host = request.headers.get("host");
  const separator = url.indexOf("://");
  if (host !== null && host !== "" && separator > 0 && url.startsWith(host, separator + 3)) {
    const rest = url.slice(separator + 3 + host.length);
    if (rest.startsWith("/")) return rest;
  }
  try {
    const parsed = new URL(url);
    return parsed.pathname + parsed.search;
  } catch {
    return "/";
  }
}
