/**
 * The path and query of an HTTP request target, whatever its form. Never
 * throws: the target is client-written.
 *
 * @module
 */
import { mayLeaveOrigin } from "../client/_origin.ts";
import { originForm } from "../telemetry/_fetch_target.ts";

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
