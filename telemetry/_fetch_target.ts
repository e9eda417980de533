/**
 * The target of an HTTP request as its client sent it, for the Fetch bindings
 * of both cores and the safe-response core. A leaf shared by both cores.
 * Imports nothing.
 *
 * @module
 */

/** An RFC 3986 scheme (linear: one character class, no alternation). */
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*$/;

/**
 * The origin form (path and query) of a request target. An absolute-form
 * target (`http://host:port/path?query`, RFC 9112 §3.2.2, sent to proxies
 * and accepted by servers) loses its scheme and authority, which are never
 * parsed (a client may write anything there); an empty path becomes `/`.
 * Any other target is returned unchanged.
 *
 * @example
 * ```ts
 * import { originForm } from "./_fetch_target.ts";
 * originForm("http://api.example/items?page=2"); // "/items?page=2"
 * ```
 */
export function originForm(target: string): string {
  if (target.startsWith("/")) return target;
  const separator = target.indexOf("://");
  if (separator < 1 || !SCHEME.test(target.slice(0, separator))) return target;
  const afterScheme = separator + 3;
  let end = afterScheme;
  while (end < target.length && !"/?#".includes(target[end])) end++;
  const rest = target.slice(end);
  return rest.startsWith("/") ? rest : `/${rest}`;
}

/**
 * A Host value as RFC 9110 allows it: `host[:port]`, a name (or IPv4) or a
 * bracketed IPv6 literal, nothing that would end a URL's authority early.
 */
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[^\s/?#@\\[\]:]*)(?::[0-9]*)?$/;

/**
 * The target of a Fetch `request` as its client sent it (origin form), or
 * `undefined` when its Host header is no `host[:port]` (RFC 9112 §3.2: a 400).
 * A server builds `request.url` from the Host and the target, and `Deno.serve`
 * joins them unchecked (`http://` + Host + target): with a Host of `a?page=7`
 * or `a/x`, the URL of `GET /orders` and that of `GET http://a/x/orders` look
 * alike, so neither reading can be trusted.
 *
 * @example
 * ```ts
 * import { fetchRequestTarget } from "./_fetch_target.ts";
 * fetchRequestTarget(new Request("http://localhost/items?page=2")); // "/items?page=2"
 * ```
 */
export function fetchRequestTarget(request: Request): string | undefined {
  const host = request.headers.get("host");
  if (host !== null && !HOST.test(host)) return undefined;
  return originForm(request.url);
}
