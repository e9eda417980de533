/**
 * Type tests whose errors are expected: every `@ts-expect-error` line below
 * must fail to type-check. `deno check tests/` (in `deno task test`) and the
 * DOM-lib compile in `dom_lib_test.ts` both fail when one of them stops
 * failing (an unused `@ts-expect-error` is itself an error). Nothing here runs;
 * it imports only the client module.
 *
 * @module
 */
import {
  hasRateLimit,
  hasSort,
  isCursorPagination,
  isDeprecated,
  isError,
  isOffsetPagination,
  isPaginated,
  isSuccess,
  type ResponseMeta,
  type SafeAnyResponse,
  type SafeErrorResponse,
  type SafeResponse,
} from "../../client/mod.ts";

/** A success branch has no `error`, an error branch no `data`. */
export function successAndErrorBranches(body: SafeResponse<{ id: string }>): unknown[] {
  if (isSuccess(body)) {
    // @ts-expect-error a success envelope has no `error`
    return [body.error, body.data.id];
  }
  // @ts-expect-error an error envelope has no `data`
  return [body.data, body.error.code];
}

/** An explicit `T` types `data`; other members of `T` do not exist. */
export function typedData(body: unknown): unknown {
  // @ts-expect-error an unchecked `unknown` body has no members
  body.success;
  if (!isSuccess<{ id: string }>(body)) return undefined;
  // @ts-expect-error `name` is not a member of `{ id: string }`
  return body.data.name;
}

/** Ruling out errors leaves success or problem details, not success alone. */
export function threeWay(body: SafeAnyResponse): unknown {
  if (isError(body)) return body.error;
  // @ts-expect-error `body` may still be a problem-details body
  return body.data;
}

/** Without a guard, optional meta fields stay optional. */
export function unguardedMeta(meta: ResponseMeta | undefined): unknown {
  // @ts-expect-error `meta` and `meta.pagination` may be undefined
  return meta.pagination.limit;
}

/** Offset and cursor pagination do not share cursor fields. */
export function paginationKinds(meta: ResponseMeta | undefined): unknown[] {
  if (!isPaginated(meta)) return [];
  const pagination = meta.pagination;
  // @ts-expect-error `totalPages` exists only on offset pagination
  const notNarrowed = pagination.totalPages;
  if (isOffsetPagination(pagination)) {
    // @ts-expect-error offset pagination has no `nextCursor`
    return [notNarrowed, pagination.nextCursor];
  }
  return [pagination.nextCursor];
}

/** Narrowed fields keep their exact types. */
export function exactFieldTypes(meta: ResponseMeta, error: SafeErrorResponse): unknown[] {
  const out: unknown[] = [];
  if (isDeprecated(meta)) {
    // @ts-expect-error `deprecated` is the literal `true`
    meta.deprecation.deprecated = false;
  }
  // @ts-expect-error `"up"` is no sort order
  if (hasSort(meta) && meta.sort.order === "up") out.push(meta.sort);
  if (hasRateLimit(error.meta)) {
    // @ts-expect-error `retryAfter` is optional
    const retryAfter: number = error.meta.rateLimit.retryAfter;
    out.push(retryAfter);
  }
  return out;
}

/** Guards take exactly one argument. */
export function arity(): boolean {
  // @ts-expect-error the pagination object is required
  return isCursorPagination();
}
