/**
 * The name and the message of a thrown value, read without a throw, for the log
 * lines of every component (a failed caller-supplied function is reported by its
 * error's name only, never its message; a store's error by both). Imports nothing.
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

/** Most characters `errorMessageOf` answers. */
export const MESSAGE_MAX = 200;

/**
 * The message of a thrown value: its `message`, else its `code` (a system
 * error's `ECONNREFUSED`), else the value as text, at most `MESSAGE_MAX`
 * characters; `"unknown"` when it cannot be read (a revoked `Proxy`, a throwing
 * getter). Never throws.
 *
 * @example
 * ```ts
 * import { errorMessageOf } from "./_error_name.ts";
 * errorMessageOf(new Error("down")); // "down"
 * errorMessageOf("down"); // "down"
 * ```
 */
export function errorMessageOf(error: unknown): string {
  try {
    const e = error as { message?: unknown; code?: unknown } | null | undefined;
    return String(e?.message || e?.code || error).slice(0, MESSAGE_MAX);
  } catch {
    return "unknown";
  }
}
