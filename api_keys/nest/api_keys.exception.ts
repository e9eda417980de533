/**
 * The HTTP exception the guard raises, and the conversion from core errors.
 *
 * @module
 */
import { HttpException } from "@nestjs/common";
import { ApiKeyError, type ApiKeyErrorCode, ApiKeyStorageError } from "../errors.ts";

/** Codes an `ApiKeyHttpException` carries. */
export type ApiKeyHttpErrorCode = ApiKeyErrorCode | "api_key_storage_unavailable";

/** Response body of an `ApiKeyHttpException`. */
export interface ApiKeyHttpErrorBody {
  /** HTTP status. */
  statusCode: number;
  /** Machine-readable code. */
  code: ApiKeyHttpErrorCode;
  /** Fixed, safe message (never key material or storage internals). */
  message: string;
  /** `api_key_usage_exceeded`: the refusing balance, the key's own or its tenant's shared pool. */
  details?: ApiKeyError["details"];
}

/**
 * A guard failure: an `HttpException` (status 401, 403, 429 or 503) whose response
 * body is `{ statusCode, code, message }` and which carries a `code` property,
 * so Nest's default handler answers with the code and envelope filters can pick
 * it up by shape. Usable with `instanceof` and `@Catch(ApiKeyHttpException)`.
 *
 * @example
 * ```ts
 * const error = new ApiKeyHttpException("api_key_missing", 401, "API key is missing");
 * error.getStatus(); // 401
 * error.code; // "api_key_missing"
 * ```
 */
export interface ApiKeyHttpException extends Error {
  /** Machine-readable code. */
  readonly code: ApiKeyHttpErrorCode;
  /** HTTP status. */
  getStatus(): number;
  /** Response body. */
  getResponse(): ApiKeyHttpErrorBody;
}

/** Constructor of `ApiKeyHttpException`; `message` must be safe to show to clients. */
export const ApiKeyHttpException: new (
  code: ApiKeyHttpErrorCode,
  status: number,
  message: string,
  details?: ApiKeyHttpErrorBody["details"],
) => ApiKeyHttpException = class ApiKeyHttpException extends HttpException {
  /** Machine-readable code. */
  readonly code: ApiKeyHttpErrorCode;

  /** Creates the exception; `message` (and `details`) must be safe to show to clients. */
  constructor(
    code: ApiKeyHttpErrorCode,
    status: number,
    message: string,
    details?: ApiKeyHttpErrorBody["details"],
  ) {
    const body: ApiKeyHttpErrorBody = details === undefined
      ? { statusCode: status, code, message }
      : { statusCode: status, code, message, details };
    super(body, status);
    this.code = code;
  }

  /** Response body. */
  override getResponse(): ApiKeyHttpErrorBody {
    return super.getResponse() as ApiKeyHttpErrorBody;
  }
};

/**
 * `ApiKeyError` (with its `details`) and `ApiKeyStorageError` become
 * `ApiKeyHttpException`s (the storage cause is dropped); anything else is
 * returned unchanged.
 */
export function toApiKeyHttpException(error: unknown): unknown {
  if (error instanceof ApiKeyError) {
    return new ApiKeyHttpException(error.code, error.httpStatus, error.message, error.details);
  }
  if (error instanceof ApiKeyStorageError) {
    return new ApiKeyHttpException(error.code, error.httpStatus, error.message);
  }
  return error;
}
