/**
 * A request's JSON body read with a size cap (`request.json()` reads any size).
 * @module
 */
import { readBounded } from "../../api_keys/fetch/_bounded_body.ts";
import { LIBRARY_ERROR } from "../_library_error.ts";

/** Express's `json()` default, 100 KiB. */
const DEFAULT_MAX_BYTES = 102_400;
const MAX_MAX_BYTES = 1 << 30;
/** Digits of a `Content-Length` read at most (a longer one is left to the stream's count). */
const MAX_LENGTH_DIGITS = 10;

/** Options of `readJsonBody`. */
export interface ReadJsonBodyOptions {
  /** Largest body in bytes, 1 to 1 GiB (default 102,400, as Express's `json()`); larger is 413. */
  maxBytes?: number;
}

/**
 * A refused request body: 413 `CONTENT_TOO_LARGE` past the cap, 400 `INVALID_JSON_BODY`.
 * @example
 * ```ts
 * import { RequestBodyError } from "@saferoute/api-kit/safe-response/fetch";
 * new RequestBodyError("CONTENT_TOO_LARGE").status; // 413
 * ```
 */
export class RequestBodyError extends Error {
  /** What is wrong with the body. */
  readonly code: "CONTENT_TOO_LARGE" | "INVALID_JSON_BODY";
  /** 413 or 400. */
  readonly status: 413 | 400;

  /** The error of `code`. */
  constructor(code: "CONTENT_TOO_LARGE" | "INVALID_JSON_BODY") {
    const tooLarge = code === "CONTENT_TOO_LARGE";
    super(tooLarge ? "The request body is too large" : "The request body is not valid JSON");
    this.name = "RequestBodyError";
    this.code = code;
    this.status = tooLarge ? 413 : 400;
  }
}

Object.defineProperty(RequestBodyError.prototype, LIBRARY_ERROR, { value: true });

/** The declared `Content-Length`, or `undefined` when absent or not 1 to 10 digits. */
function declaredLength(request: Request): number | undefined {
  const value = request.headers.get("content-length");
  if (value === null || value.length > MAX_LENGTH_DIGITS || !/^[0-9]+$/.test(value)) {
    return undefined;
  }
  return Number(value);
}

/**
 * The JSON body of `request`, streamed up to `maxBytes` (never held whole past it). Throws a
 * `RequestBodyError` (413 or 400), a `TypeError` for an invalid `maxBytes` or a body already read
 * or locked (a route answers it as a 500: the server read it first, not the client's fault).
 * @example
 * ```ts
 * import { createSafeFetch, readJsonBody } from "@saferoute/api-kit/safe-response/fetch";
 * const createOrder = createSafeFetch().route({ statusCode: 201 }, async (request) => ({
 *   received: await readJsonBody(request, { maxBytes: 64 * 1024 }),
 * }));
 * ```
 */
export async function readJsonBody(
  request: Request,
  options: ReadJsonBodyOptions = {},
): Promise<unknown> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 1 || maxBytes > MAX_MAX_BYTES) {
    throw new TypeError(`readJsonBody: maxBytes must be an integer from 1 to ${MAX_MAX_BYTES}`);
  }
  if (request.bodyUsed || request.body?.locked === true) {
    // The server read it first (Hono's `c.req.json()`): a bug of the server, not the client's body
    throw new TypeError("readJsonBody: the request body was already read or is locked");
  }
  if ((declaredLength(request) ?? 0) > maxBytes) {
    await request.body?.cancel().catch(() => {});
    throw new RequestBodyError("CONTENT_TOO_LARGE");
  }
  let bytes: Uint8Array;
  try {
    bytes = await readBounded(request.body, maxBytes + 1);
  } catch {
    throw new RequestBodyError("INVALID_JSON_BODY");
  }
  if (bytes.length > maxBytes) throw new RequestBodyError("CONTENT_TOO_LARGE");
  try {
    return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    throw new RequestBodyError("INVALID_JSON_BODY");
  }
}
