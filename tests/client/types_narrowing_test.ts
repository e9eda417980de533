/**
 * Type tests that must compile: each guard narrows its argument to the
 * expected type (checked with `Equals` at compile time by `deno check` /
 * `deno test`), and the narrowed code paths run on real values.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  type CursorPaginationMeta,
  type DeprecationMeta,
  type ErrorMeta,
  hasFieldSelection,
  hasFilters,
  hasRateLimit,
  hasResponseTime,
  hasSort,
  isCursorPagination,
  isDeprecated,
  isError,
  isOffsetPagination,
  isPaginated,
  isProblemDetailsResponse,
  isSuccess,
  type PaginationMeta,
  type RateLimitMeta,
  type ResponseMeta,
  type SafeAnyResponse,
  type SafeErrorResponse,
  type SafeProblemDetailsResponse,
  type SafeResponse,
  type SafeSuccessResponse,
  type SortInfo,
} from "../../client/mod.ts";
import { cursor, failure, fullMeta, offset, problem, success } from "./_fixtures.ts";

/** `true` when `A` and `B` are the same type. */
type Equals<A, B> = (<X>() => X extends A ? 1 : 2) extends (<X>() => X extends B ? 1 : 2) ? true
  : false;
/** Compiles only when given `true`. */
function expectType<T extends true>(): T | void {}

interface Item {
  id: string;
}

/** Narrows a typed `SafeResponse<Item[]>` both ways; `T` survives. */
function countItems(body: SafeResponse<Item[]>): number | string {
  if (isSuccess(body)) {
    expectType<Equals<typeof body, SafeSuccessResponse<Item[]>>>();
    return body.data.length;
  }
  expectType<Equals<typeof body, SafeErrorResponse>>();
  return body.error.code;
}

/** Narrows the three-way union step by step. */
function describeAny(body: SafeAnyResponse<Item>): string {
  if (isProblemDetailsResponse(body)) {
    expectType<Equals<typeof body, SafeProblemDetailsResponse>>();
    return `${body.status} ${body.title}`;
  }
  expectType<Equals<typeof body, SafeResponse<Item>>>();
  if (isError(body)) {
    expectType<Equals<typeof body, SafeErrorResponse>>();
    return body.error.message;
  }
  expectType<Equals<typeof body, SafeSuccessResponse<Item>>>();
  return body.data.id;
}

/** Narrows an unknown JSON body; an explicit `T` types `data`. */
function fromJson(body: unknown): string | number | undefined {
  if (isSuccess<Item>(body)) {
    expectType<Equals<typeof body, SafeSuccessResponse<Item>>>();
    return body.data.id;
  }
  if (isError(body)) return body.statusCode;
  if (isProblemDetailsResponse(body)) return body.instance;
  expectType<Equals<typeof body, unknown>>();
  return undefined;
}

/** Meta guards take `meta` (possibly `undefined`) and keep its own type. */
function readMeta(meta: ResponseMeta | undefined): unknown[] {
  const out: unknown[] = [];
  if (isPaginated(meta)) {
    expectType<Equals<typeof meta.pagination, PaginationMeta | CursorPaginationMeta>>();
    const pagination = meta.pagination;
    if (isOffsetPagination(pagination)) {
      expectType<Equals<typeof pagination, PaginationMeta>>();
      out.push(pagination.totalPages);
    } else {
      expectType<Equals<typeof pagination, CursorPaginationMeta>>();
      out.push(pagination.nextCursor);
    }
    if (isCursorPagination(pagination)) out.push(pagination.hasMore);
  }
  if (isDeprecated(meta)) {
    expectType<Equals<typeof meta.deprecation, DeprecationMeta>>();
    out.push(meta.deprecation.deprecated);
  }
  if (hasResponseTime(meta)) {
    expectType<Equals<typeof meta.responseTime, number>>();
    out.push(meta.responseTime);
  }
  if (hasSort(meta)) {
    expectType<Equals<typeof meta.sort, SortInfo>>();
    out.push(meta.sort.order);
  }
  if (hasFilters(meta)) {
    expectType<Equals<typeof meta.filters, Record<string, unknown>>>();
    out.push(Object.keys(meta.filters).length);
  }
  if (hasFieldSelection(meta)) {
    expectType<Equals<typeof meta.fields, string[]>>();
    out.push(meta.fields.length);
  }
  if (hasRateLimit(meta)) {
    expectType<Equals<typeof meta.rateLimit, RateLimitMeta>>();
    out.push(meta.rateLimit.remaining);
  }
  return out;
}

/** Meta guards work on the `meta` of error and problem-details bodies too. */
function readErrorMeta(body: SafeErrorResponse | SafeProblemDetailsResponse): number | undefined {
  const meta = body.meta;
  if (hasRateLimit(meta)) {
    expectType<Equals<typeof meta, ErrorMeta & { rateLimit: RateLimitMeta }>>();
    return meta.rateLimit.reset;
  }
  return undefined;
}

describe("narrowing (compile-time checks, run on real values)", () => {
  it("narrows typed response unions", () => {
    assert.equal(countItems({ success: true, statusCode: 200, data: [{ id: "a" }] }), 1);
    assert.equal(countItems(failure), "NOT_FOUND");
    assert.equal(describeAny(problem), "404 Not Found");
    assert.equal(describeAny(failure), "Not Found");
    assert.equal(describeAny({ success: true, statusCode: 200, data: { id: "z" } }), "z");
  });

  it("narrows unknown JSON", () => {
    assert.equal(fromJson(JSON.parse('{"success":true,"statusCode":200,"data":{"id":"j"}}')), "j");
    assert.equal(fromJson(JSON.parse(JSON.stringify(failure))), 404);
    assert.equal(fromJson(JSON.parse(JSON.stringify(problem))), "/items/9");
    assert.equal(fromJson(JSON.parse(JSON.stringify(success.data))), undefined);
  });

  it("narrows meta and pagination", () => {
    assert.deepEqual(readMeta(fullMeta), [2, true, 1.5, "asc", 1, 2, 99]);
    assert.deepEqual(readMeta({ pagination: cursor }), ["c2", true]);
    assert.deepEqual(readMeta({ pagination: offset, fields: [] }), [2, 0]);
    assert.deepEqual(readMeta(undefined), []);
    assert.equal(readErrorMeta(failure), 5);
    assert.equal(readErrorMeta(problem), undefined);
  });
});
