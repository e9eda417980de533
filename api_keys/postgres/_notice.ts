/**
 * Reads what PostgreSQL sends the change feed: the notice payloads of the
 * trigger of `prisma/migrations/0002_api_key_change_feed` and the counter.
 * Both are bounded before they are parsed; anything else is rejected.
 *
 * @module
 */
import { type ApiKeyChangeKind, CHANGE_KINDS } from "../change_feed.ts";

/**
 * Longest payload read: the trigger's notices are under 200 bytes (prefixes
 * over 64 characters are sent as null) and PostgreSQL caps any at 8,000.
 */
const MAX_PAYLOAD_LENGTH = 1_024;
/** Longest prefix a notice may carry (the trigger's limit). */
const MAX_PREFIX_LENGTH = 64;
/** Counters are read as decimal text of at most 15 digits: safe integers. */
const COUNTER_TEXT = /^(?:0|[1-9][0-9]{0,14})$/;

/**
 * A failure of the feed told by a fixed phrase, safe to show in
 * `status().error` (driver errors are shown by code only).
 *
 * @example
 * ```ts
 * import { FeedError } from "./_notice.ts";
 * new FeedError("poll timed out").message; // "poll timed out"
 * ```
 */
export class FeedError extends Error {
  override name = "FeedError";
}

/**
 * One notice of the trigger: a change of `prefix` (null after a TRUNCATE or
 * for an overlong prefix) with its counter.
 *
 * @example
 * ```ts
 * import type { FeedNotice } from "./_notice.ts";
 * const notice: FeedNotice = { counter: 3, kind: "revoked", prefix: "AbCdEfGhIjKl" };
 * ```
 */
export interface FeedNotice {
  /** Counter of the change. */
  counter: number;
  /** What happened (`truncated`: the table was emptied). */
  kind: ApiKeyChangeKind | "truncated";
  /** Prefix of the changed key, or null. */
  prefix: string | null;
}

/**
 * Parses a notice payload (`{"n": …, "kind": …, "prefix": …}`); undefined for
 * anything else: not a string, too long, not that JSON shape. Linear in the
 * (bounded) payload length.
 *
 * @example
 * ```ts
 * import { parseNotice } from "./_notice.ts";
 * parseNotice('{"n" : 3, "kind" : "revoked", "prefix" : "AbCdEfGhIjKl"}')?.counter; // 3
 * parseNotice("hello"); // undefined
 * ```
 */
export function parseNotice(payload: unknown): FeedNotice | undefined {
  if (typeof payload !== "string" || payload.length > MAX_PAYLOAD_LENGTH) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(payload);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const { n, kind, prefix } = value as Record<string, unknown>;
  if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 1) return undefined;
  if (prefix !== null && (typeof prefix !== "string" || prefix.length > MAX_PREFIX_LENGTH)) {
    return undefined;
  }
  if (kind === "truncated") return prefix === null ? { counter: n, kind, prefix } : undefined;
  if (typeof kind !== "string" || !CHANGE_KINDS.has(kind)) return undefined;
  return { counter: n, kind: kind as ApiKeyChangeKind, prefix };
}

/**
 * Parses the counter as the feed reads it (`n::text`); throws for anything
 * but the decimal text of a safe integer (a `FeedError`).
 *
 * @example
 * ```ts
 * import { parseCounter } from "./_notice.ts";
 * parseCounter("42"); // 42
 * ```
 */
export function parseCounter(text: unknown): number {
  if (typeof text !== "string" || !COUNTER_TEXT.test(text)) {
    throw new FeedError("api_key_change_counter.n is not a counter");
  }
  return Number(text);
}
