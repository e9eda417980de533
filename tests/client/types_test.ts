/**
 * The wire types of client/types.ts: each field list is checked complete at
 * compile time (`Equals`), and the server's body builders, which return these
 * types, produce no field outside them.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type {
  SafeAnyResponse,
  SafeErrorResponse,
  SafeProblemDetailsResponse,
  SafeResponse,
  SafeSuccessResponse,
} from "../../client/types.ts";
import { buildErrorBody, buildProblemDetails, buildSuccessBody } from "../../safe_response/mod.ts";

type Equals<A, B> = (<X>() => X extends A ? 1 : 2) extends (<X>() => X extends B ? 1 : 2) ? true
  : false;
const expectType = <T extends true>(): T | void => {};

const SUCCESS_FIELDS = [
  "success",
  "statusCode",
  "code",
  "requestId",
  "data",
  "meta",
  "timestamp",
  "path",
] as const;
const ERROR_FIELDS = [
  "success",
  "statusCode",
  "requestId",
  "error",
  "meta",
  "timestamp",
  "path",
] as const;
const PROBLEM_FIELDS = [
  "type",
  "title",
  "status",
  "detail",
  "instance",
  "code",
  "requestId",
  "details",
  "meta",
] as const;

expectType<Equals<keyof SafeSuccessResponse, typeof SUCCESS_FIELDS[number]>>();
expectType<Equals<keyof SafeErrorResponse, typeof ERROR_FIELDS[number]>>();
expectType<Equals<keyof SafeProblemDetailsResponse, typeof PROBLEM_FIELDS[number]>>();
expectType<Equals<SafeResponse<number>["success"], boolean>>();
expectType<Equals<Extract<SafeResponse<number>, { success: true }>["data"], number>>();
expectType<
  Equals<Exclude<SafeAnyResponse, SafeResponse>, SafeProblemDetailsResponse>
>();

const within = (body: object, fields: readonly string[]) =>
  assert.deepEqual(Object.keys(body).filter((key) => !fields.includes(key)), []);

describe("client/types.ts", () => {
  it("the server's bodies carry only the declared fields", () => {
    const meta = { responseTime: 3 };
    const success = buildSuccessBody({
      statusCode: 200,
      data: [1],
      code: "OK",
      requestId: "r1",
      meta,
      timestamp: "2026-01-01T00:00:00.000Z",
    });
    within(success, SUCCESS_FIELDS);
    assert.equal(success.success, true);
    const error = buildErrorBody({
      statusCode: 404,
      code: "NOT_FOUND",
      message: "Not Found",
      details: { id: 1 },
      requestId: "r1",
      meta,
    });
    within(error, ERROR_FIELDS);
    assert.deepEqual(Object.keys(error.error).sort(), ["code", "details", "message"]);
    const problem = buildProblemDetails({
      status: 422,
      code: "INVALID",
      detail: "Invalid",
      instance: "/x",
      requestId: "r1",
      details: [],
      meta,
    });
    within(problem, PROBLEM_FIELDS);
  });
});
