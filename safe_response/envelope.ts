/**
 * Builders of the success and error envelopes; `undefined` fields are left out.
 * @module
 */
import type {
  ErrorMeta,
  ResponseMeta,
  SafeErrorResponse,
  SafeSuccessResponse,
} from "../client/types.ts";

/** Fields of a success envelope. */
export interface SuccessBodyInput<T> {
  /** HTTP status. */
  statusCode: number;
  /** The handler's result (`undefined` is sent as `null`). */
  data: T;
  /** Success code. */
  code?: string;
  /** Request id. */
  requestId?: string;
  /** Metadata (left out when `undefined`). */
  meta?: ResponseMeta;
  /** Formatted timestamp. */
  timestamp?: string;
  /** Request path. */
  path?: string;
}

/**
 * Whether JSON has no value for `data` (`JSON.stringify` would leave its member out): nothing, a
 * function, a symbol, or an object whose `toJSON("data")` answers one of these (called here once
 * more than when it is serialized).
 */
function noJsonValue(data: unknown, toJson = true): boolean {
  if (data === undefined || typeof data === "function" || typeof data === "symbol") return true;
  if (!toJson || typeof data !== "object" || data === null) return false;
  try {
    const toJSON = (data as { toJSON?: unknown }).toJSON;
    return typeof toJSON === "function" && noJsonValue(toJSON.call(data, "data"), false);
  } catch {
    return false; // thrown again where the body is serialized (its failure answered there)
  }
}

/**
 * Builds a success envelope (`data` that JSON has no value for, such as nothing, sent as `null`).
 * @example
 * ```ts
 * import { buildSuccessBody } from "@saferoute/api-kit/safe-response";
 * const body = buildSuccessBody({ statusCode: 201, data: { id: "1" }, code: "CREATED" });
 * // { success: true, statusCode: 201, code: "CREATED", data: { id: "1" } }
 * ```
 */
export function buildSuccessBody<T>(input: SuccessBodyInput<T>): SafeSuccessResponse<T> {
  const body: SafeSuccessResponse<T> = {
    success: true,
    statusCode: input.statusCode,
  } as SafeSuccessResponse<T>;
  if (input.code !== undefined) body.code = input.code;
  if (input.requestId !== undefined) body.requestId = input.requestId;
  body.data = (noJsonValue(input.data) ? null : input.data) as T;
  if (input.meta !== undefined) body.meta = input.meta;
  if (input.timestamp !== undefined) body.timestamp = input.timestamp;
  if (input.path !== undefined) body.path = input.path;
  return body;
}

/** Fields of an error envelope. */
export interface ErrorBodyInput {
  /** HTTP status. */
  statusCode: number;
  /** Machine-readable code. */
  code: string;
  /** Client-safe message. */
  message: string;
  /** Extra details. */
  details?: unknown;
  /** Request id. */
  requestId?: string;
  /** Metadata (left out when `undefined`). */
  meta?: ErrorMeta;
  /** Formatted timestamp. */
  timestamp?: string;
  /** Request path. */
  path?: string;
}

/**
 * Builds an error envelope.
 * @example
 * ```ts
 * import { buildErrorBody } from "@saferoute/api-kit/safe-response";
 * const body = buildErrorBody({ statusCode: 404, code: "NOT_FOUND", message: "Not Found" });
 * // { success: false, statusCode: 404, error: { code: "NOT_FOUND", message: "Not Found" } }
 * ```
 */
export function buildErrorBody(input: ErrorBodyInput): SafeErrorResponse {
  const body = { success: false, statusCode: input.statusCode } as SafeErrorResponse;
  if (input.requestId !== undefined) body.requestId = input.requestId;
  body.error = { code: input.code, message: input.message };
  if (input.details !== undefined) body.error.details = input.details;
  if (input.meta !== undefined) body.meta = input.meta;
  if (input.timestamp !== undefined) body.timestamp = input.timestamp;
  if (input.path !== undefined) body.path = input.path;
  return body;
}
