/**
 * Request ids: which incoming and generated values are kept, and the default (a random UUID).
 *
 * @module
 */

/** Default request-id header. */
export const DEFAULT_REQUEST_ID_HEADER = "X-Request-Id";

const SAFE_REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

/**
 * Whether an incoming value may be reused as the request id: a single string
 * of 1 to 128 visible ASCII characters (no spaces, no control characters).
 */
export function isSafeRequestId(value: unknown): value is string {
  return typeof value === "string" && SAFE_REQUEST_ID.test(value);
}

/**
 * The incoming id when safe, else the generated one when safe, else a random UUID: a generator's
 * value is checked like an incoming one (a line break or a number is never sent).
 */
export function resolveRequestId(incoming: unknown, generate?: () => unknown): string {
  if (isSafeRequestId(incoming)) return incoming;
  const generated = generate?.();
  return isSafeRequestId(generated) ? generated : crypto.randomUUID();
}
