/**
 * Plain objects: neither arrays nor class instances.
 * @module
 */

/**
 * Whether `value` is a plain object of any realm (prototype `Object.prototype` or `null`): no array,
 * class instance or `Error`. Never throws (a revoked `Proxy` is `false`).
 */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  try {
    const prototype = Object.getPrototypeOf(value);
    return prototype === null || Object.getPrototypeOf(prototype) === null;
  } catch {
    return false;
  }
}
