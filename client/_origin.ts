/**
 * The one rule of a path that may leave its origin, shared by the server
 * (which collapses such a request path before it builds links of it) and the
 * client's guards (which refuse such a link).
 *
 * @module
 */

/**
 * What can make a path resolve to another host once a URL parser reads it: a
 * second leading slash, a backslash (read as a slash), a tab or a line break
 * (removed before parsing, so `/\t/host` is `//host`).
 *
 * @example
 * ```ts
 * import { mayLeaveOrigin } from "./_origin.ts";
 * mayLeaveOrigin("/items?page=2"); // false
 * mayLeaveOrigin("/\t/evil.example"); // true
 * ```
 */
export function mayLeaveOrigin(path: string): boolean {
  return MAY_LEAVE_ORIGIN.test(path);
}

const MAY_LEAVE_ORIGIN = /^.[/\\]|[\\\t\n\r]/;
