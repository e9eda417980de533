/**
 * The one rule of key names, and the code-point count it shares with the
 * admin routes' `q` and the element's name fields (`fitsCodePoints`, at home
 * in `client/elements/_limits.ts`). Loaded with the flows and the admin
 * routes, not at import of the guard.
 *
 * @module
 */
import { fitsCodePoints, MAX_API_KEY_NAME_LENGTH } from "../client/elements/_limits.ts";
import { fail, requirePrintable } from "./_input.ts";

export { fitsCodePoints };

/**
 * Returns `value`, or throws `api_key_invalid_input` for `field`: the one
 * rule of key names (the service's create, rotate and import, the admin
 * routes' `name` and `expectedName`): 1 to `MAX_API_KEY_NAME_LENGTH` code
 * points (`fitsCodePoints`), not only spaces, printable (`printableProblem`).
 */
export function requireKeyName(value: unknown, field: string): string {
  if (
    typeof value !== "string" || value.trim() === "" ||
    !fitsCodePoints(value, MAX_API_KEY_NAME_LENGTH)
  ) {
    fail(field, `must be 1 to ${MAX_API_KEY_NAME_LENGTH} characters, not only spaces`);
  }
  return requirePrintable(value, field);
}
