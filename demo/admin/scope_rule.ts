/**
 * What a scope resource in a request body may be, for both demos (the Nest
 * demo's `ScopeDto` and the Fetch demo's body check): 1 to 64 of `a-z`,
 * `0-9`, `_`, `.` and `-`, as the library's `[a-z0-9_.-]+` with a length cap.
 *
 * @module
 */

/** Longest resource name. */
export const SCOPE_RESOURCE_MAX_LENGTH = 64;

/** The characters of a resource name. */
export const SCOPE_RESOURCE_PATTERN: RegExp = /^[a-z0-9_.-]+$/;

/** Whether `value` is a valid scope resource. */
export function isScopeResource(value: unknown): boolean {
  return typeof value === "string" && value.length <= SCOPE_RESOURCE_MAX_LENGTH &&
    SCOPE_RESOURCE_PATTERN.test(value);
}
