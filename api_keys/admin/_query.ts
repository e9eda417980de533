/**
 * Reading the admin routes' query parameters: `GET /keys`'s page (limit,
 * cursor, filters, sort), the cursor itself, `GET /audit`'s page and filters,
 * and the usage window (the service's rule) and key list of `GET /usage` and
 * `GET /keys/:id/usage`. An empty value reads as an absent one. Every
 * parameter is bounded and range-checked; a bad one throws
 * `ApiKeyValidationError` (400 `api_key_invalid_input` naming the parameter).
 *
 * @module
 */
import { fail, instantProblem, MAX_KEY_ID_LENGTH, storableTextProblem } from "../_input.ts";
import { fitsCodePoints } from "../_key_name.ts";
import { checkUsageWindow } from "../metering/_usage_window.ts";
import type { ApiKeyPageSort, ApiKeyPageStatus, ListApiKeyPageOptions } from "../storage/types.ts";
import type { PagePosition } from "../storage/_paging.ts";
import { keyIdsProblem, MAX_KEYS_PER_READ } from "../storage/_access.ts";
import type { AuditAction, AuditLogQuery } from "../audit/types.ts";
import type { Environment } from "../types.ts";
import { MAX_API_KEY_NAME_LENGTH } from "../types.ts";
import { bodyInstant, oneOf, queryInstant } from "./_body.ts";
import type { KeySort, KeyStatusFilter } from "./types.ts";

/** A query parameter lookup, as `AdminRequest.query`. */
export type QueryOf = (name: string) => string | null | undefined;

/** Keys per page: default and most. */
export const DEFAULT_PAGE_SIZE = 25;
export const MAX_PAGE_SIZE = 100;
/** The default usage window: a day. */
const DAY_MS = 86_400_000;

const STATUSES: readonly KeyStatusFilter[] = ["active", "rotating", "expired", "revoked", "all"];
const SORTS: readonly KeySort[] = ["created_desc", "created_asc", "name_asc", "last_used_desc"];

/**
 * Longest cursor (`encodeCursor`): base64url of `["sort","id","value"]`, the
 * longest sort, a key id (UTF-16 units) and a name (code points; or a date,
 * shorter) at their bounds, each unit or code point at most 6 bytes (a
 * control character's JSON escape, as `\u0001`; any other at most 3 in
 * UTF-8, an emoji's two units 4). So every key `decodeCursor` reads ends a
 * page with a cursor it reads back.
 */
const MAX_CURSOR_LENGTH = Math.ceil(
  (10 + Math.max(...SORTS.map((sort) => sort.length)) +
    6 * (MAX_KEY_ID_LENGTH + MAX_API_KEY_NAME_LENGTH)) * 4 / 3,
);
const ENVIRONMENTS: readonly Environment[] = ["live", "test"];

/** A parameter's value; absent and empty read alike (`?cursor=` is the first page). */
function param(query: QueryOf, name: string): string | undefined {
  const value = query(name);
  return value === null || value === undefined || value === "" ? undefined : value;
}

const decoder = new TextDecoder("utf-8", { fatal: true });

/** The cursor after `position` in `sort`: `[sort, id, value]` as JSON in UTF-8, base64url. */
export function encodeCursor(sort: ApiKeyPageSort, position: PagePosition): string {
  const value = position.value instanceof Date ? position.value.toISOString() : position.value;
  const bytes = new TextEncoder().encode(JSON.stringify([sort, position.id, value]));
  return btoa(Array.from(bytes, (byte) => String.fromCharCode(byte)).join(""))
    .replaceAll("+", "-").replaceAll("/", "_").replaceAll("=", "");
}

/** Whether `value` is text a stored key may hold (`storableTextProblem`). */
function isStorableText(value: unknown): value is string {
  return typeof value === "string" && storableTextProblem(value) === undefined;
}

/** The position a cursor of `sort` names; a cursor of another sort or malformed is a 400. */
export function decodeCursor(text: string, sort: ApiKeyPageSort): PagePosition {
  let parsed: unknown;
  try {
    if (text.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(text)) throw new Error();
    const binary = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
    parsed = JSON.parse(decoder.decode(Uint8Array.from(binary, (char) => char.charCodeAt(0))));
  } catch {
    fail("cursor", "must be a nextCursor of this list");
  }
  if (!Array.isArray(parsed) || parsed.length !== 3) {
    fail("cursor", "must be a nextCursor of this list");
  }
  const [of, id, value] = parsed as unknown[];
  if (of !== sort) fail("cursor", "belongs to another sort");
  // Text no key holds (storableTextProblem: PostgreSQL refuses U+0000) is no cursor the server wrote.
  if (!isStorableText(id) || id === "" || id.length > MAX_KEY_ID_LENGTH) {
    fail("cursor", "must be a nextCursor of this list");
  }
  if (sort === "name_asc") {
    if (!isStorableText(value) || !fitsCodePoints(value, MAX_API_KEY_NAME_LENGTH)) {
      fail("cursor", "must be a nextCursor of this list");
    }
    return { id, value };
  }
  if (value === null && sort === "last_used_desc") return { id, value: null };
  const ms = typeof value === "string" && value.length <= 40 ? Date.parse(value) : NaN;
  // Parsed but out of the instants the service reads (PostgreSQL refuses them): malformed too.
  if (Number.isNaN(ms) || instantProblem(ms) !== undefined) {
    fail("cursor", "must be a nextCursor of this list");
  }
  return { id, value: new Date(ms) };
}

/** `GET /keys`'s page: the storage's options but `now`, and the page size. */
export interface ListQuery {
  /** Keys per page (1 to 100). */
  limit: number;
  /** The storage's page options, `limit` one more than the page (to know whether one follows). */
  options: Omit<ListApiKeyPageOptions, "now">;
}

/** Reads a page's `limit`: 1 to 100 in decimal digits, `undefined` when absent (`GET /keys`, `GET /audit`). */
export function queryLimit(query: QueryOf): number | undefined {
  const raw = param(query, "limit");
  if (raw === undefined) return undefined;
  const limit = /^[0-9]{1,3}$/.test(raw) ? Number(raw) : NaN;
  if (!(limit >= 1 && limit <= MAX_PAGE_SIZE)) {
    fail("limit", `must be an integer from 1 to ${MAX_PAGE_SIZE}`);
  }
  return limit;
}

/**
 * Reads `limit` (1 to 100, default 25), `cursor` (a `nextCursor`), `q` (1
 * to 200 characters the storage can hold: `storableTextProblem`), `status` (default every key but the revoked ones),
 * `environment` and `sort` (default `created_desc`).
 */
export function listQuery(query: QueryOf): ListQuery {
  const limit = queryLimit(query) ?? DEFAULT_PAGE_SIZE;
  const sort = oneOf(param(query, "sort"), SORTS, "created_desc", "sort");
  const status = oneOf<KeyStatusFilter | "unrevoked">(
    param(query, "status"),
    STATUSES,
    "unrevoked",
    "status",
  ) satisfies ApiKeyPageStatus;
  const environment = oneOf<Environment | "any">(
    param(query, "environment"),
    ENVIRONMENTS,
    "any",
    "environment",
  );
  const q = param(query, "q") ?? null;
  if (q !== null && !fitsCodePoints(q, MAX_API_KEY_NAME_LENGTH)) {
    fail("q", `must be at most ${MAX_API_KEY_NAME_LENGTH} characters`);
  }
  const problem = q === null ? undefined : storableTextProblem(q);
  if (problem !== undefined) fail("q", problem);
  const cursor = param(query, "cursor");
  return {
    limit,
    options: {
      limit: limit + 1,
      after: cursor === undefined ? null : decodeCursor(cursor, sort),
      q,
      status,
      environment: environment === "any" ? null : environment,
      sort,
    },
  };
}

/**
 * Reads `GET /audit`'s `keyId`, `actor`, `action`, `from` and `to` (ISO 8601
 * instants, as the usage window's), `cursor` and `limit` (as `GET /keys`'s);
 * the service checks the rest.
 */
export function auditQuery(query: QueryOf): AuditLogQuery {
  const instant = (name: string) => {
    const value = param(query, name);
    return value === undefined ? undefined : bodyInstant(value, name);
  };
  return {
    keyId: param(query, "keyId"),
    actor: param(query, "actor"),
    action: param(query, "action") as AuditAction | undefined,
    from: instant("from"),
    to: instant("to"),
    cursor: param(query, "cursor"),
    limit: queryLimit(query),
  };
}

/**
 * A usage read's window: `granularity` (default `hour`), `from` and `to`
 * (default the last 24 hours; at most 31 days and 1 hour by hour, 366 days by day).
 */
export interface UsageWindow {
  /** Bucket size. */
  granularity: "hour" | "day";
  /** Start. */
  from: Date;
  /** End, excluded. */
  to: Date;
  /** The bounds of the buckets read (whole UTC hours or days): what the answer states. */
  covered: { from: Date; to: Date };
}

/**
 * Reads `granularity`, `from` and `to` (`to` defaults to `now`, `from` to a
 * day before `to`), checked by the service's rule (`checkUsageWindow`), and
 * the bounds of its buckets (that rule's widening).
 */
export function usageWindow(query: QueryOf, now: Date): UsageWindow {
  const granularity = oneOf(param(query, "granularity"), ["hour", "day"], "hour", "granularity");
  const to = queryInstant(param(query, "to"), now, "to");
  const from = queryInstant(param(query, "from"), new Date(to.getTime() - DAY_MS), "from");
  const { fromMs, toMs } = checkUsageWindow({ granularity, from, to });
  return { granularity, from, to, covered: { from: new Date(fromMs), to: new Date(toMs) } };
}

/**
 * Reads `keys`: 1 or more key ids of 1 to 200 characters, comma-separated,
 * as one read of several keys takes them (`keyIdsProblem`: distinct, at
 * most `MAX_KEYS_PER_READ`).
 */
export function usageKeys(query: QueryOf): string[] {
  const raw = param(query, "keys");
  // Bounded before it is split: the most ids, each at its longest, with their commas.
  if (raw === undefined || raw.length > MAX_KEYS_PER_READ * (MAX_KEY_ID_LENGTH + 1)) {
    fail("keys", `must be 1 to ${MAX_KEYS_PER_READ} key ids, comma-separated`);
  }
  const ids = raw.split(",");
  if (!ids.every((id) => id !== "" && id.length <= MAX_KEY_ID_LENGTH)) {
    fail("keys", `must be key ids of 1 to ${MAX_KEY_ID_LENGTH} characters, comma-separated`);
  }
  const problem = keyIdsProblem(ids);
  if (problem !== undefined) fail("keys", problem);
  return ids;
}
