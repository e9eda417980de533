/**
 * The one refusal of an unknown option of the safe-response options bags: the module's, field
 * selection's, and a route's (Nest decorators and Fetch route options alike). A misspelt option
 * silently ignored is a limit silently off (`maxLimt`: no cap on `?limit=`).
 *
 * @module
 */
import { assertKnownFields } from "../telemetry/_known_fields.ts";

/**
 * Throws a `TypeError` (`<who>: unknown option \`x\` (known: a, b)`) for an enumerable key of
 * `options`, own or inherited, not in `known` (the library's one rule, `assertKnownFields`), or
 * (`<who>: options must be an object`) when `options` is no object.
 * @example
 * ```ts
 * import { refuseUnknownOptions } from "./_options.ts";
 * refuseUnknownOptions({ sunset: "2027-01-01" }, ["since", "sunset"], "Deprecated");
 * ```
 */
export function refuseUnknownOptions(
  options: unknown,
  known: readonly string[],
  who: string,
): void {
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new TypeError(`${who}: options must be an object`);
  }
  assertKnownFields(options, known, who, "option");
}

/**
 * The option names of `T`, each listed once: the type checker refuses a name missing or unknown.
 * @example
 * ```ts
 * import { optionNames } from "./_options.ts";
 * optionNames<{ since?: string; sunset?: string }>({ since: true, sunset: true }); // ["since", "sunset"]
 * ```
 */
export function optionNames<T>(names: Readonly<Record<keyof T & string, true>>): readonly string[] {
  return Object.freeze(Object.keys(names));
}
