/**
 * Runs a test body with an enumerable field on `Object.prototype`, as a
 * polyfill may add, and removes it after, also when the body throws.
 *
 * @module
 */

/** Runs `body` with the enumerable `Object.prototype[name]` defined, then deletes it. */
export function withPolyfillField(name: string, body: () => void): void {
  Object.defineProperty(Object.prototype, name, {
    value: () => {},
    enumerable: true,
    configurable: true,
    writable: true,
  });
  try {
    body();
  } finally {
    delete (Object.prototype as Record<string, unknown>)[name];
  }
}
