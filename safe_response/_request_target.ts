/**
 * The path and query of an HTTP request target, whatever its form. Never
 * throws: the target is client-written.
 *
 * @module
 */
import { mayLeaveOrigin } from "../client/_origin.ts";

/** An RFC 3986 scheme (linear: one character class, no alternation). */
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*$/;

/**
 * The origin form (path and query) of a request target. An absolute-form
 * target (`http://host:port/path?query`, RFC 9112 §3.2.2, sent to proxies
 * and accepted by servers) loses its scheme and authority, which are never
 * parsed (a client may write anything there); an empty path becomes `/`.
 * Any other target is returned unchanged.
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
 * A request target as a URL on a fixed origin: its origin form parsed after
 * `http://localhost` (no target can make parsing fail or change the origin),
 * the path's leading slashes collapsed to one, so neither it nor a link made
 * of it is a network-path reference (`//host`, `/\\host`) to another host.
 */
export function sameOriginUrl(target: string): URL {
  const form = originForm(target);
  const url = new URL(`http://localhost${form.startsWith("/") ? "" : "/"}${form}`);
  url.pathname = url.pathname.replace(/^\/{2,}/, "/");
  return url;
}

/**
 * The path of a request target (without its query), as sent unless it could
 * resolve to another host (then as `sameOriginUrl` reads it): the envelope's
 * `path` and problem details' `instance`.
 */
export function requestPath(target: string): string {
  const form = originForm(target);
  const query = form.indexOf("?");
  const path = query === -1 ? form : form.slice(0, query);
  return mayLeaveOrigin(path) ? sameOriginUrl(path).pathname : path;
}
