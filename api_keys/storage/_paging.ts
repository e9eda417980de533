/**
 * One page of a tenant's keys (`ApiKeyStorage.listPageByTenant`) as rules
 * over records: the status, the filters, the orders and the cursor. The one
 * home of these rules for `InMemoryApiKeyStorage`, the fallback over
 * `listByTenant` and the check of a storage's page.
 *
 * @module
 */
import { acceptedUntilMs } from "../_accepted_until.ts";
import type { ApiKeyRecord, ApiKeyStatus } from "../types.ts";
import type { ApiKeyPageSort, ApiKeyRecordPage, ListApiKeyPageOptions } from "./types.ts";

/**
 * The status of `record` at `nowMs` (see `ApiKeyStatus`): expired from
 * `acceptedUntilMs` on, as verify refuses it (a key rotated without grace
 * whatever `nowMs`).
 */
export function statusOf(record: ApiKeyRecord, nowMs: number): ApiKeyStatus {
  if (record.revokedAt !== null) return "revoked";
  if (acceptedUntilMs(record) <= nowMs) return "expired";
  if (record.rotatedAt !== null || record.replacedByKeyId !== null) return "rotating";
  return "active";
}

/** Whether `record` is of `tenantId` and passes the status, environment and `q` filters. */
export function matchesPage(
  record: ApiKeyRecord,
  tenantId: string,
  options: Pick<ListApiKeyPageOptions, "status" | "environment" | "q" | "now">,
): boolean {
  if (record.tenantId !== tenantId) return false;
  if (options.environment !== null && record.environment !== options.environment) return false;
  const status = statusOf(record, options.now.getTime());
  if (options.status === "unrevoked" ? status === "revoked" : status !== options.status) {
    if (options.status !== "all") return false;
  }
  const { q } = options;
  return q === null || record.name.toLowerCase().includes(q.toLowerCase()) ||
    record.prefix.startsWith(q);
}

/** A record's place in an order: its id and its value of the sort field. */
export interface PagePosition {
  /** Record id. */
  id: string;
  /** `createdAt`, `name` or `lastUsedAt`, by the sort. */
  value: Date | string | null;
}

/** The position of `record` in `sort`. */
export function positionOf(
  record: Pick<ApiKeyRecord, "id" | "name" | "createdAt" | "lastUsedAt">,
  sort: ApiKeyPageSort,
): PagePosition {
  const value = sort === "name_asc"
    ? record.name
    : sort === "last_used_desc"
    ? record.lastUsedAt
    : record.createdAt;
  return { id: record.id, value };
}

const byCodeUnits = (a: string, b: string): number => a < b ? -1 : a > b ? 1 : 0;
const msOf = (value: Date | string | null): number | null =>
  value instanceof Date ? value.getTime() : null;

/**
 * The order `sort` (negative: `a` first): by the sort field (names by UTF-16
 * code units; never-used keys last in `last_used_desc`), then `id` ascending.
 */
export function comparePositions(
  sort: ApiKeyPageSort,
): (a: PagePosition, b: PagePosition) => number {
  return (a, b) => {
    let order: number;
    if (sort === "name_asc") order = byCodeUnits(String(a.value), String(b.value));
    else {
      const [x, y] = [msOf(a.value), msOf(b.value)];
      if (x === null || y === null) order = x === y ? 0 : x === null ? 1 : -1;
      else order = sort === "created_asc" ? x - y : y - x;
    }
    return order !== 0 ? order : byCodeUnits(a.id, b.id);
  };
}

/**
 * The page `options` of `tenantId` among `records` (a tenant's records,
 * revoked ones included, so each predecessor is found), as
 * `listPageByTenant` answers it.
 */
export function pageOf(
  records: readonly ApiKeyRecord[],
  tenantId: string,
  options: ListApiKeyPageOptions,
): ApiKeyRecordPage & { records: ApiKeyRecord[] } {
  const order = comparePositions(options.sort);
  const { after } = options;
  const page = records
    .filter((record) =>
      matchesPage(record, tenantId, options) &&
      (after === null || order(positionOf(record, options.sort), after) > 0)
    )
    .sort((a, b) => order(positionOf(a, options.sort), positionOf(b, options.sort)))
    .slice(0, options.limit);
  const onPage = new Set(page.map((record) => record.id));
  const predecessors: Record<string, string> = {};
  for (const record of records) {
    const next = record.replacedByKeyId;
    if (record.tenantId === tenantId && next !== null && onPage.has(next)) {
      predecessors[next] = record.id;
    }
  }
  return { records: page, predecessors };
}
