/**
 * Request ids: which incoming values are reused, and the default generator.
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

/** The incoming id when safe, else a generated one (default: a random UUID). */
export function resolveRequestId(
  incoming: unknown,
  generate: () => string = () => crypto.randomUUID(),
): string {
  return isSafeRequestId(incoming) ? incoming : generate();
}
