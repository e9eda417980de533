/**
 * Options bags: refuse an unknown option by name, as `SafeResponseModule`
 * does (a misspelt option silently ignored is a limit silently off).
 *
 * @module
 */
import { assertKnownFields } from "../telemetry/_known_fields.ts";

/**
 * Throws a `TypeError` (`<label>: unknown option \`x\` (known: ...)`) naming
 * each key of `options` not in `known` (`assertKnownFields`), or when
 * `options` is not an object; `undefined` passes. `holder`: the option that
 * holds a client, and a method only such a client has: the client itself
 * passed as the options is told to go in that option.
 *
 * @example
 * ```ts
 * import { assertKnownOptions } from "./_options.ts";
 * assertKnownOptions({ timeoutMs: 1_000 }, ["store", "timeoutMs"], "createRateLimiter");
 * ```
 */
export function assertKnownOptions(
  options: unknown,
  known: readonly string[],
  label: string,
  holder?: { option: string; method: string },
): void {
  if (options === undefined) return;
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new TypeError(`${label}: options must be an object`);
  }
  if (
    holder !== undefined &&
    typeof (options as Record<string, unknown>)[holder.method] === "function"
  ) {
    throw new TypeError(
      `${label} takes options: pass the ${holder.option} as \`{ ${holder.option} }\``,
    );
  }
  assertKnownFields(options, known, label, "option");
}

/**
 * `value` (the option `name`) when it is a boolean or `undefined`, else a
 * `TypeError` (`<label>: <name> must be a boolean`): `"false"` is no `false`.
 *
 * @example
 * ```ts
 * import { optionalBoolean } from "./_options.ts";
 * optionalBoolean(true, "clustered", "createRedisRateLimitStore"); // true
 * ```
 */
export function optionalBoolean(value: unknown, name: string, label: string): boolean | undefined {
  if (value === undefined || typeof value === "boolean") return value;
  throw new TypeError(`${label}: ${name} must be a boolean`);
}

/**
 * `value` (the option `name`) when it is a function or `undefined`, else a
 * `TypeError` (`<label>: <name> must be a function`): a logger given as a
 * string would drop every line, a clock as a number fail every check.
 *
 * @example
 * ```ts
 * import { optionalFunction } from "./_options.ts";
 * optionalFunction(console.warn, "logger", "createRateLimiter"); // console.warn
 * ```
 */
export function optionalFunction<T>(value: T, name: string, label: string): T {
  if (value === undefined || typeof value === "function") return value;
  throw new TypeError(`${label}: ${name} must be a function`);
}
