/**
 * The name of a thrown value, for the log lines of every component (a failed
 * caller-supplied function is reported by its error's name only, never its
 * message). Imports nothing.
 *
 * @module
 */

/**
 * The name of a thrown value: an `Error`'s `name`, else its type; `"unknown"`
 * when it cannot be read (a revoked `Proxy`, a throwing getter). Never throws.
 *
 * @example
 * ```ts
 * import { errorNameOf } from "./_error_name.ts";
 * errorNameOf(new TypeError("bad")); // "TypeError"
 * errorNameOf("down"); // "string"
 * ```
 */
export function errorNameOf(error: unknown): string {
  try {
    return error instanceof Error ? String(error.name) : typeof error;
  } catch {
    return "unknown";
  }
}
