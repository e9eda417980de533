/**
 * Scopes: `resource:level` strings; `write` implies `read`; resources match exactly.
 *
 * @module
 */
import type { Scope, ScopeLevel } from "./types.ts";

const RESOURCE_PATTERN = /^[a-z0-9_.-]+$/;

/**
 * Flattens scopes to `resource:level` strings, deduped, in first-seen order.
 * Throws a `TypeError` for a resource outside `[a-z0-9_.-]+` or an unknown level.
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
  for (const scope of scopes) {
    const resource = scope?.resource;
    if (typeof resource !== "string" || !RESOURCE_PATTERN.test(resource)) {
      throw new TypeError(
        `scope resource ${JSON.stringify(resource)} must match [a-z0-9_.-]+`,
      );
    }
    if (scope.level !== "read" && scope.level !== "write") {
      throw new TypeError(`scope level ${JSON.stringify(scope.level)} must be "read" or "write"`);
    }
    seen.add(`${resource}:${scope.level}`);
  }
  return [...seen];
}

/**
 * Whether `granted` satisfies `resource` at `required` level (`write` implies `read`).
 *
 * @example
 * ```ts
 * import { scopeSatisfies } from "./scopes.ts";
 * scopeSatisfies(["orders:write"], "orders", "read"); // true
 * scopeSatisfies(["orders:read"], "orders", "write"); // false
 * ```
 */
export function scopeSatisfies(granted: string[], resource: string, required: ScopeLevel): boolean {
  const write = `${resource}:write`;
  if (required === "write") return granted.includes(write);
  const read = `${resource}:read`;
  for (const scope of granted) if (scope === read || scope === write) return true;
  return false;
}
