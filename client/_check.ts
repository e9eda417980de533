/**
 * Internal building blocks of the guards: tiny runtime checks of JSON values.
 * Not exported from `mod.ts`.
 *
 * @module
 */
import { isCount } from "./_decimal.ts";

/** A runtime check of one value. */
export type Check = (value: unknown) => boolean;

/** A JSON object: not `null`, not an array. */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * `table`'s own value at `key`, else `undefined`: a key the server sends never
 * reads `Object.prototype` (`constructor`, `__proto__`, `toString`).
 */
export const ownValue = <T>(table: Readonly<Record<string, T>>, key: string): T | undefined =>
  Object.hasOwn(table, key) ? table[key] : undefined;

/** A string. */
export const isString: Check = (value) => typeof value === "string";

/**
 * A count the server sends (pagination, rate limits, HTTP statuses): a safe
 * integer from `min` to `max` (never fractional, infinite or past 2^53 - 1).
 */
export const countFrom = (min: number, max = Number.MAX_SAFE_INTEGER): Check => (value) =>
  isCount(value, min) && value <= max;

/** An HTTP status (`statusCode` of the envelopes, `status` of problem details): 100 to 599. */
export const isHttpStatus: Check = countFrom(100, 599);

/** A duration the server measures (`meta.responseTime`, milliseconds): finite, never negative. */
export const isDuration: Check = (value) => Number.isFinite(value) && (value as number) >= 0;

/** A boolean. */
export const isBoolean: Check = (value) => typeof value === "boolean";

/** A string or `null`. */
export const isStringOrNull: Check = (value) => value === null || isString(value);

/**
 * An array of strings, without holes: a sparse array (any length, up to
 * 2^32 - 1) is refused at its first hole, never walked.
 */
export const isStringArray: Check = (value) => {
  if (!Array.isArray(value)) return false;
  for (let i = 0; i < value.length; i++) {
    if (!(i in value) || !isString(value[i])) return false;
  }
  return true;
};

/** One of the given primitive values. */
export const oneOf = (...values: unknown[]): Check => (value) => values.includes(value);

/**
 * An object whose `required` fields are present and pass their checks, and
 * whose `optional` fields are absent (`undefined`) or pass theirs. Other fields
 * are allowed. A value that throws when read (a getter, a revoked `Proxy`) is
 * refused: `false`, never thrown.
 */
export const shape =
  (required: Record<string, Check>, optional: Record<string, Check> = {}) =>
  (value: unknown): value is Record<string, unknown> => {
    try {
      return isRecord(value) &&
        Object.entries(required).every(([key, check]) => check(value[key])) &&
        Object.entries(optional).every(([key, check]) =>
          value[key] === undefined || check(value[key])
        );
    } catch {
      return false;
    }
  };
