/**
 * Scopes: `resource:level` strings; `write` implies `read`; resources match exactly.
 *
 * @module
 */
import type { Scope, ScopeLevel } from "./types.ts";
import { parseKey } from "./key_format.ts";

/**
 * A scope resource: 1 to 128 (seed 0.4) characters of `[A-Za-z0-9._/-]`, a
 * superset of `@nestarc/api-keys`' rule; never `:`, the level's separator.
 */
const RESOURCE_PATTERN = /^[A-Za-z0-9._/-]{1,128}$/;
/** The rule of a scope resource, as error messages state it. */
export const SCOPE_RESOURCE_RULE = "1-128 characters of [A-Za-z0-9._/-]";

/**
 * Whether `value` is a scope resource: of `RESOURCE_PATTERN`, and not an API
 * key (of the alphabet too: pasted in the scope field, it would be stored and
 * listed in plain text).
 */
function isScopeResource(value: unknown): value is string {
  return typeof value === "string" && RESOURCE_PATTERN.test(value) && !isKey(value);
}

/** Whether `value` parses as an API key of the current layout (its checksum holds). */
function isKey(value: unknown): boolean {
  return typeof value === "string" && parseKey(value) !== null;
}

/**
 * Throws a `TypeError` naming `label` unless `resource` is a scope resource
 * (`SCOPE_RESOURCE_RULE`, and not an API key): the one check of a resource
 * given (`create`, `importKeys`, a route's required scope). Never echoes it: a
 * pasted key or secret, or a huge value.
 */
export function assertScopeResource(resource: unknown, label: string): asserts resource is string {
  if (isScopeResource(resource)) return;
  throw new TypeError(
    `${label} must ${isKey(resource) ? "not be an API key" : `be ${SCOPE_RESOURCE_RULE}`}`,
  );
}

/**
 * Whether `value` is a flat `resource:level` scope of a valid resource and
 * level: the admin routes' `options.scopes` check, with `flattenScopes` the
 * one home of the rule.
 */
export function isFlatScope(value: unknown): value is string {
  if (typeof value !== "string") return false;
  const at = value.lastIndexOf(":");
  const level = value.slice(at + 1);
  return at > 0 && isScopeResource(value.slice(0, at)) && (level === "read" || level === "write");
}

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
 * outside `[A-Za-z0-9._/-]` or over 128 characters, or an API key, or an
 * unknown level.
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
    assertScopeResource(resource, `scopes[${i}].resource`);
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
