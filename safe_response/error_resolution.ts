/**
 * Turns anything thrown into a status, a code, a safe message and details. Recognised: HTTP
 * exceptions (`getStatus()`, `getResponse()`) and this library's branded errors; anything else,
 * other libraries' `{ code, status }` objects included, is a generic 500.
 * @module
 */
import { callAppFunction } from "./_app_functions.ts";
import { catalogErrorShape, type ErrorCatalog, isSafeException } from "./error_catalog.ts";
import { LIBRARY_ERROR } from "./_library_error.ts";
import { isPlainObject } from "./_plain_object.ts";
import { fallbackErrorCode, isHttpStatus, lookupErrorCode, problemTitle } from "./http_status.ts";
import { validationDetails, type ValidationDetailsMode } from "./validation_details.ts";

/**
 * Custom error-code mapper; `defaultCode` is used when it returns `undefined`.
 * @example
 * ```ts
 * import type { ErrorCodeMapper } from "@saferoute/api-kit/safe-response";
 * const mapper: ErrorCodeMapper = (_exception, { statusCode, defaultCode }) =>
 *   statusCode === 404 ? "RESOURCE_MISSING" : defaultCode;
 * ```
 */
export type ErrorCodeMapper = (
  exception: unknown,
  context: { statusCode: number; defaultCode: string },
) => string | undefined;

/**
 * Options of {@link resolveError}.
 */
export interface ErrorResolutionOptions {
  /** Codes merged over {@link DEFAULT_ERROR_CODES}. */
  errorCodes?: Readonly<Record<number, string>>;
  /** Custom mapper; wins when it returns a non-empty string. */
  errorCodeMapper?: ErrorCodeMapper;
  /** Catalog of `SafeException` keys (those without their own catalog). */
  errorCatalog?: Pick<ErrorCatalog, "get">;
  /** `details` of validation errors (default `"messages"`). */
  validationDetails?: ValidationDetailsMode;
}

/** What a thrown value becomes on the wire. */
export interface ResolvedError {
  /** HTTP status. */
  statusCode: number;
  /** Machine-readable code. */
  code: string;
  /** Client-safe message. */
  message: string;
  /** Validation details or the `details` of an HTTP exception body. */
  details?: unknown;
  /** `true` when the value was not recognised (a generic 500 that should be logged). */
  unexpected: boolean;
  /** Why the value is a 500, for the log (a catalog key missing, a failed mapper). */
  reason?: string;
}

/** Message of a validation error (an HTTP exception body with a message list, sent as `details`). */
export const VALIDATION_ERROR_MESSAGE = "Validation failed";

interface Shape {
  status: number;
  code?: string;
  message?: string;
  details?: unknown;
}

type Bag = Record<string, unknown>;

const isObject = (value: unknown): value is Bag => typeof value === "object" && value !== null;

const nonEmpty = (value: unknown): string | undefined =>
  typeof value === "string" && value !== "" ? value : undefined;

function ownCode(value: Bag): string | undefined {
  return Object.hasOwn(value, "code") ? nonEmpty(value.code) : undefined;
}

/** Nest 12's `errorCode` of an HTTP exception or its body (Nest 10 and 11 have none). */
function errorCode(exception: Bag, from: Bag): string | undefined {
  return Object.hasOwn(exception, "errorCode") ? nonEmpty(from.errorCode) : undefined;
}

function httpExceptionShape(
  exception: Bag,
  status: number,
  mode: ValidationDetailsMode | undefined,
): Shape {
  const body = (exception.getResponse as () => unknown)();
  const code = ownCode(exception) ?? errorCode(exception, exception);
  if (!isObject(body)) {
    return { status, code, message: nonEmpty(body) ?? nonEmpty(exception.message) };
  }
  // A class instance as the body (a database driver's `Error`): its message (which Nest also
  // copies to the exception's) and code are internal; the status's title and code are sent.
  if (!isPlainObject(body)) return { status, code };
  const shape: Shape = {
    status,
    code: code ?? nonEmpty(body.code) ?? errorCode(exception, body),
  };
  if (Array.isArray(body.message)) {
    shape.message = VALIDATION_ERROR_MESSAGE;
    shape.details = validationDetails(exception, body.message, mode);
  } else {
    shape.message = nonEmpty(body.message) ?? nonEmpty(exception.message);
  }
  if (body.details !== undefined) shape.details = body.details;
  return shape;
}

function readShape(
  exception: unknown,
  mode: ValidationDetailsMode | undefined,
): Shape | undefined {
  if (!isObject(exception)) return undefined;
  if (typeof exception.getStatus === "function" && typeof exception.getResponse === "function") {
    const status = exception.getStatus();
    return isHttpStatus(status, 400) ? httpExceptionShape(exception, status, mode) : undefined;
  }
  if ((exception as Record<symbol, unknown>)[LIBRARY_ERROR] !== true) return undefined;
  const code = ownCode(exception);
  const status = exception.httpStatus ?? exception.status;
  if (code === undefined || !isHttpStatus(status, 400)) return undefined;
  // A coded error is not an HTTP exception: its 5xx message (and details) may be internal.
  if (status >= 500) return { status, code };
  const shape: Shape = { status, code, message: nonEmpty(exception.message) };
  if (isObject(exception.details)) shape.details = exception.details; // an ApiKeyError's balance
  return shape;
}

function safeShape(
  exception: unknown,
  options: ErrorResolutionOptions,
): Shape | string | undefined {
  try {
    if (isSafeException(exception)) {
      const shape = catalogErrorShape(exception, options.errorCatalog);
      return "missing" in shape ? shape.missing : shape;
    }
    return readShape(exception, options.validationDetails);
  } catch {
    return undefined; // a hostile getter or proxy: treat as unexpected
  }
}

/**
 * Resolves a thrown value. Code order: `errorCodeMapper`, the exception's own code (a catalog key,
 * an HTTP exception's or its body's `code`/`errorCode`), `errorCodes`, the default map, the fallback.
 * Unrecognised values, catalog keys in no catalog and a failing mapper give a 500 (`reason` says why).
 * @example
 * ```ts
 * import { ApiKeyError } from "@saferoute/api-kit/api-keys";
 * import { resolveError } from "@saferoute/api-kit/safe-response";
 * resolveError(new ApiKeyError("api_key_scope_insufficient")).statusCode; // 403
 * // A coded error of another library is not trusted with the client:
 * const foreign = Object.assign(new Error("row 42 of table secrets"), { code: "P2025", status: 404 });
 * resolveError(foreign).statusCode; // 500
 * resolveError("boom").statusCode; // 500
 * ```
 */
export function resolveError(
  exception: unknown,
  options: ErrorResolutionOptions = {},
): ResolvedError {
  const read = safeShape(exception, options);
  const shape = typeof read === "string" ? undefined : read;
  const statusCode = shape?.status ?? 500;
  const defaultCode = shape?.code ?? statusCodeDefault(statusCode, options);
  const { errorCodeMapper } = options;
  let mapped: unknown;
  if (errorCodeMapper !== undefined) {
    const outcome = callAppFunction(
      "option `errorCodeMapper`",
      () => errorCodeMapper(exception, { statusCode, defaultCode }),
    );
    if (!outcome.ok) {
      return {
        statusCode: 500,
        code: statusCodeDefault(500, options),
        message: problemTitle(500),
        unexpected: true,
        reason: outcome.failure,
      };
    }
    mapped = outcome.value;
  }
  const resolved: ResolvedError = {
    statusCode,
    code: nonEmpty(mapped) ?? defaultCode,
    message: shape?.message ?? problemTitle(statusCode),
    unexpected: shape === undefined,
  };
  if (shape?.details !== undefined) resolved.details = shape.details;
  if (typeof read === "string") resolved.reason = read;
  return resolved;
}

/** The code of `statusCode` without a mapper: `errorCodes`, the default map, the fallback. */
function statusCodeDefault(statusCode: number, options: ErrorResolutionOptions): string {
  return options.errorCodes?.[statusCode] ?? lookupErrorCode(statusCode) ??
    fallbackErrorCode(statusCode);
}
