/**
 * The one rule of key names, and the code-point bound it shares with the
 * admin routes' `q`. Loaded with the flows and the admin routes, not at
 * import of the guard.
 *
 * @module
 */
import { MAX_API_KEY_NAME_LENGTH } from "../client/elements/_limits.ts";
import { fail, requirePrintable } from "./_input.ts";

/**
 * Whether `text` holds at most `max` code points, as JSON Schema's `maxLength` counts them (the
 * OpenAPI document's): the bound of key names and of the admin routes' `q`.
 */
export function fitsCodePoints(text: string, max: number): boolean {
  if (text.length <= max) return true; // never more code points than UTF-16 units
  let count = 0;
  for (const _ of text) if (++count > max) return false;
  return true;
}

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
