/**
 * The window of a usage read: the one rule of `ApiKeysService.usage` and of
 * the admin routes' usage window, apart from the usage recorder so that the
 * admin entry checks a window without loading the recorder.
 *
 * @module
 */
import { fail, instantProblem, MAX_API_KEY_INSTANT_MS } from "../_input.ts";
import type { ApiKeyUsageQuery } from "./usage.ts";

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
/**
 * Longest span of a usage read per granularity, and how its refusal says it: by hour, a local
 * calendar month read hour by hour (31 days, and the hour a month giving back its summer time has).
 */
const MAX_SPAN = {
  hour: { ms: 31 * DAY_MS + HOUR_MS, said: "31 days and 1 hour" },
  day: { ms: 366 * DAY_MS, said: "366 days" },
} as const;

/** `value` as epoch ms, or the `ApiKeyValidationError` of `field`. */
function instant(value: unknown, field: string): number {
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) {
    fail(field, "must be a valid Date");
  }
  const ms = value.getTime();
  const problem = instantProblem(ms) ?? (ms < 0 ? "must not be before 1970" : undefined);
  if (problem !== undefined) fail(field, problem);
  return ms;
}

/**
 * Checks the window of a usage read: `granularity` `"hour"` or `"day"`,
 * `from` and `to` valid Dates from 1970, `to` after `from` by at most 31 days
 * and 1 hour by hour, 366 days by day, and rounded up to its bucket's end at most
 * 9999-12-31T23:59:59.999Z (`instantProblem`): at most 9999-12-31T23:00Z by
 * hour, 9999-12-31T00:00Z by day (the last bucket of 9999 ends in 10000, so it
 * is never read and no answer's `to` passes the latest instant); else the
 * `ApiKeyValidationError` naming the field (and the latest `to`). Returns the
 * window widened to whole UTC buckets (`from` floored, `to` rounded up), in
 * epoch ms: the bounds of the buckets a read of it answers.
 */
export function checkUsageWindow(
  window: Pick<ApiKeyUsageQuery, "granularity" | "from" | "to">,
): { fromMs: number; toMs: number } {
  const { granularity } = window;
  if (granularity !== "hour" && granularity !== "day") {
    fail("granularity", 'must be "hour" or "day"');
  }
  const fromMs = instant(window.from, "from");
  const toMs = instant(window.to, "to");
  if (toMs <= fromMs) fail("to", "must be after from");
  const span = MAX_SPAN[granularity];
  if (toMs - fromMs > span.ms) fail("to", `must be at most ${span.said} after from`);
  const size = granularity === "hour" ? HOUR_MS : DAY_MS;
  const endMs = Math.ceil(toMs / size) * size;
  if (instantProblem(endMs) !== undefined) {
    // The latest `to`: the start of the bucket holding the latest instant (it ends past it).
    const latest = new Date(Math.floor(MAX_API_KEY_INSTANT_MS / size) * size).toISOString();
    const max = new Date(MAX_API_KEY_INSTANT_MS).toISOString();
    fail(
      "to",
      `must be at most ${latest} by ${granularity} ` +
        `(a later one, rounded up to a whole ${granularity}, ends past ${max})`,
    );
  }
  return { fromMs: fromMs - (fromMs % size), toMs: endMs };
}
