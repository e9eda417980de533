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

/** A string. */
export const isString: Check = (value) => typeof value === "string";

/** A number. */
export const isNumber: Check = (value) => typeof value === "number";

/**
 * A count the server sends (pagination, rate limits): a safe integer of at
 * least `min` (never negative, fractional, infinite or past 2^53 - 1).
 */
export const countFrom = (min: number): Check => (value) => isCount(value, min);

/** A boolean. */
export const isBoolean: Check = (value) => typeof value === "boolean";

/** A string or `null`. */
export const isStringOrNull: Check = (value) => value === null || isString(value);

/** An array of strings. */
export const isStringArray: Check = (value) => Array.isArray(value) && value.every(isString);

/** One of the given primitive values. */
export const oneOf = (...values: unknown[]): Check => (value) => values.includes(value);

/**
 * An object whose `required` fields are present and pass their checks, and
 * whose `optional` fields are absent (`undefined`) or pass theirs. Other fields
 * are allowed.
 */
export const shape =
  (required: Record<string, Check>, optional: Record<string, Check> = {}) =>
  (value: unknown): value is Record<string, unknown> =>
    isRecord(value) &&
    Object.entries(required).every(([key, check]) => check(value[key])) &&
    Object.entries(optional).every(([key, check]) => value[key] === undefined || check(value[key]));
