/**
 * Validation of a status given to a decorator.
 *
 * @module
 */

/** `status` when it is an integer HTTP status (100-599); else throws naming the decorator. */
export function httpStatus(status: unknown, decorator: string): number {
  if (!Number.isInteger(status) || (status as number) < 100 || (status as number) > 599) {
    throw new TypeError(`${decorator}: \`statusCode\` must be an HTTP status (100-599)`);
  }
  return status as number;
}
