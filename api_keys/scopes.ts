/**
 * Scopes: `resource:level` strings; `write` implies `read`; resources match exactly.
 *
 * @module
 */
import type { Scope, ScopeLevel } from "./types.ts";

const RESOURCE_PATTERN = /^[a-z0-9_.-]+$/;
/** Longest scope resource (seed 0.4). */
const MAX_RESOURCE_LENGTH = 128;

/**
 * Throws a `TypeError` naming `label` unless `level` is `"read"` or `"write"`:
 * an unknown level is a programmer error, never read as some level. The value
 * is shown only when it is a short word (a pasted key or secret never is).
 */
export function assertScopeLevel(level: unknown, label: string): asserts level is ScopeLevel {
  if (level === "read" || level === "write") return;
  const shown = typeof level === "string"
    ? /^[A-Za-z]{1,16}$/.test(level) ? JSON.stringify(level) : `(a string of ${level.length})`
    : level === null
    ? "null"
    : typeof level;
  throw new TypeError(`${label} ${shown} must be "read" or "write"`);
}

/**
 * Flattens scopes to `resource:level` strings, deduped, in first-seen order.
 * Throws a `TypeError` naming the entry (`scopes[2].resource`) for a resource
 * outside `[a-z0-9_.-]+` or over 128 characters, or an unknown level.
 *
 * @example
 * ```ts
 * import { flattenScopes } from "./scopes.ts";
 * flattenScopes([{ resource: "orders", level: "write" }, { resource: "orders", level: "write" }]);
 * // ["orders:write"]
 * ```
 */
export function flattenScopes(scopes: Scope[]): string[] {
  if (!Array.isArray(scopes)) throw new TypeError("scopes must be an array");
  const seen = new Set<string>();
  for (const [i, scope] of scopes.entries()) {
    const resource = scope?.resource;
    // Named by its index, never echoed: a pasted key or secret, or a huge value.
    if (
      typeof resource !== "string" || resource.length > MAX_RESOURCE_LENGTH ||
      !RESOURCE_PATTERN.test(resource)
    ) {
      throw new TypeError(
        `scopes[${i}].resource must be 1-${MAX_RESOURCE_LENGTH} characters of [a-z0-9_.-]`,
      );
    }
    assertScopeLevel(scope.level, `scopes[${i}].level`);
    seen.add(`${resource}:${scope.level}`);
  }
  return [...seen];
}

/**
 * Whether `granted` satisfies `resource` at `required` level (`write` implies
 * `read`). Throws a `TypeError` for an unknown `required` level.
 *
 * @example
 * ```ts
 * import { scopeSatisfies } from "./scopes.ts";
 * scopeSatisfies(["orders:write"], "orders", "read"); // true
 * scopeSatisfies(["orders:read"], "orders", "write"); // false
 * ```
 */
export function scopeSatisfies(granted: string[], resource: string, required: ScopeLevel): boolean {
  assertScopeLevel(required, "scopeSatisfies: required level");
  const write = `${resource}:write`;
  if (required === "write") return granted.includes(write);
  const read = `${resource}:read`;
  for (const scope of granted) if (scope === read || scope === write) return true;
  return false;
}
