/**
 * Reads what the change feed reads from PostgreSQL: the rows of the change
 * log of `prisma/migrations/0005_api_key_change_log` and the counter, each
 * bounded before it is parsed. Notice payloads are never parsed: a notice is
 * a wake-up hint only.
 *
 * @module
 */
import { type ApiKeyChangeKind, CHANGE_KINDS } from "../change_feed.ts";

/** Longest prefix a log row may carry (the trigger's limit). */
const MAX_PREFIX_LENGTH = 64;
/** Counters are read as decimal text of at most 15 digits: safe integers. */
const COUNTER_TEXT = /^(?:0|[1-9][0-9]{0,14})$/;
/** The counter's epoch (migration 0029) is read as the text of a uuid. */
const EPOCH_TEXT = /^[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}$/;

/**
 * A failure of the feed told by a fixed phrase, safe to show in
 * `status().error` (driver errors are shown by code only).
 */
export class FeedError extends Error {
  override name = "FeedError";
}

/**
 * One row of the change log: a change of `prefix` (null after a TRUNCATE, for
 * an overlong prefix, or for a kind this release does not know: a reset) with
 * its counter.
 */
export interface LoggedChange {
  /** Counter of the change. */
  counter: number;
  /** What happened (`truncated`: the table was emptied). */
  kind: ApiKeyChangeKind | "truncated";
  /** Prefix of the changed key, or null. */
  prefix: string | null;
}

/**
 * Reads a row of `api_key_change_log` (`n` as text, `kind`, `prefix`). A
 * counter that is not a safe integer throws a `FeedError`; an unknown kind or
 * a prefix that is not a string of at most 64 characters reads as a change
 * without a prefix (the feed resets).
 */
export function parseLoggedChange(row: Record<string, unknown>): LoggedChange {
  const counter = parseCounter(row.n);
  const { kind, prefix } = row;
  if (kind === "truncated") return { counter, kind, prefix: null };
  const known = typeof kind === "string" && CHANGE_KINDS.has(kind);
  const named = typeof prefix === "string" && prefix.length <= MAX_PREFIX_LENGTH;
  return {
    counter,
    kind: known ? kind as ApiKeyChangeKind : "updated",
    prefix: known && named ? prefix : null,
  };
}

/**
 * Parses the counter as the feed reads it (`n::text`); throws for anything
 * but the decimal text of a safe integer (a `FeedError`).
 */
export function parseCounter(text: unknown): number {
  if (typeof text !== "string" || !COUNTER_TEXT.test(text)) {
    throw new FeedError("api_key_change_counter.n is not a counter");
  }
  return Number(text);
}

/**
 * Parses the counter's epoch as the feed reads it (`epoch::text`, migration
 * 0029): null where the database has none; throws for anything but the text
 * of a uuid (a `FeedError`).
 */
export function parseEpoch(text: unknown): string | null {
  if (text === null || text === undefined) return null;
  if (typeof text !== "string" || !EPOCH_TEXT.test(text)) {
    throw new FeedError("api_key_change_counter.epoch is not an epoch");
  }
  return text;
}
