/**
 * Instants across a raw statement of `PrismaApiKeyStorage`, one rule for
 * every one: a driver adapter (`@prisma/adapter-pg` 7) sends a `Date`
 * parameter without its offset and reads a `timestamptz` as UTC wall time, so
 * in a session whose time zone is not UTC each instant moved by the zone's
 * offset. An instant goes in as ISO text (its `Z` kept: `$n::text::timestamptz`)
 * and comes back as epoch milliseconds.
 *
 * @module
 */

/** `at` as a raw statement's parameter: ISO text, read by `$n::text::timestamptz`. */
export function sqlInstant(at: Date): string;
export function sqlInstant(at: Date | undefined): string | null;
export function sqlInstant(at: Date | undefined): string | null {
  return at === undefined ? null : at.toISOString();
}

/**
 * The `timestamptz` expression `sql` as epoch milliseconds (`float8`: exact at
 * the millisecond precision stored), read back with {@link instantOf}.
 *
 * @example
 * ```ts
 * import { epochMsOf } from "./_sql_instant.ts";
 * epochMsOf("at"); // "(extract(epoch FROM at) * 1000)::float8"
 * ```
 */
export function epochMsOf(sql: string): string {
  return `(extract(epoch FROM ${sql}) * 1000)::float8`;
}

/** A column read as `epochMsOf` answers it, as a `Date` (an unreadable one: an invalid `Date`). */
export function instantOf(value: unknown): Date {
  return new Date(typeof value === "number" || value instanceof Date ? Number(value) : NaN);
}
