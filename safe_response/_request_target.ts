/**
 * The path and query of an HTTP request target, whatever its form. Never
 * throws: the target is client-written.
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
