/**
 * The element's calls to the admin routes: JSON in and out, the app's cookies
 * or a bearer token, the CSRF header on every state-changing request, and
 * errors from the safe-response envelope.
 *
 * @module
 */
import { CSRF_HEADER } from "../_csrf.ts";
import { parseRetryAfter } from "../_retry_after.ts";

export { CSRF_HEADER };

/**
 * How long one call may take, from `getToken` to the body's last byte (30 s):
 * a token not in by then fails as `TOKEN_ERROR` (nothing sent), a reply not
 * all in is aborted and fails as `NETWORK_ERROR`.
 */
export const REQUEST_TIMEOUT_MS = 30_000;
/** Largest response body read (characters); a longer one is an error. */
export const MAX_RESPONSE_CHARS = 1_000_000;

/** How requests authenticate. */
export interface Auth {
  /** Fetch's `credentials`. */
  credentials: RequestCredentials;
  /** Returns the bearer token; without it the cookies alone authenticate. */
  getToken?: (() => string | Promise<string>) | undefined;
  /** The CSRF header's name and value (`config.csrf`); default {@link CSRF_HEADER}. */
  csrf?: readonly [string, string] | undefined;
}

/** A failed call: the envelope's `code` and `message`, or the element's own. */
export class AdminApiError extends Error {
  /** Machine-readable code (`NETWORK_ERROR`, `TOKEN_ERROR`, `BAD_RESPONSE`, or the server's). */
  readonly code: string;
  /** HTTP status, 0 when none. */
  readonly status: number;
  /** A 429's `Retry-After` in seconds, `null` without a readable one. */
  readonly retryAfter: number | null;
  /** Builds the error. */
  constructor(code: string, message: string, status = 0, retryAfter: number | null = null) {
    super(message);
    this.name = "AdminApiError";
    this.code = code;
    this.status = status;
    this.retryAfter = retryAfter;
  }
}

const record = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value)
    ? value as Record<string, unknown>
    : undefined;

/** Longest `Retry-After` kept (about 31 years): a date beyond it is none the element can show. */
const MAX_RETRY_AFTER_S = 999_999_999;

/**
 * A 429's `Retry-After` in whole seconds (`parseRetryAfter`); `null` for none,
 * an unreadable one, or one past `MAX_RETRY_AFTER_S` (no date to show).
 */
function retryAfterOf(value: string | null): number | null {
  const seconds = value === null ? undefined : parseRetryAfter(value);
  return seconds === undefined || seconds > MAX_RETRY_AFTER_S ? null : seconds;
}

/** The code of a failure whose body names none (the admin routes' answers always do). */
export function statusCode(status: number): string {
  return `HTTP_${status}`;
}

/** The envelope's `error` (or a problem details' `code` and `detail`) as an {@link AdminApiError}. */
function failure(body: unknown, status: number, retryAfter: number | null): AdminApiError {
  const error = record(record(body)?.error) ?? record(body);
  const text = (value: unknown) => typeof value === "string" ? value : undefined;
  return new AdminApiError(
    text(error?.code) ?? statusCode(status),
    text(error?.message) ?? text(error?.detail) ?? `HTTP ${status}`,
    status,
    retryAfter,
  );
}

/**
 * The body's text, read no further than {@link MAX_RESPONSE_CHARS}: `null`
 * past it, the rest never read (the body is cancelled, its connection given up).
 */
async function boundedText(response: Response): Promise<string | null> {
  if (response.body === null) return "";
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text;
    text += value;
    if (text.length > MAX_RESPONSE_CHARS) {
      reader.cancel().catch(() => {}); // nothing more is read; a failing cancel changes nothing
      return null;
    }
  }
}

/**
 * The request's headers, the token awaited until `signal` aborts: `TOKEN_ERROR`, nothing sent, when
 * `getToken` fails, is late or answers no token (not a non-empty string), or a header cannot be
 * sent as it is (a token with a line break).
 */
async function headersOf(
  auth: Auth,
  method: string,
  json: boolean,
  signal: AbortSignal,
): Promise<Headers> {
  try {
    const headers = new Headers({ Accept: "application/json" });
    if (method !== "GET") headers.set(...(auth.csrf ?? CSRF_HEADER));
    if (json) headers.set("Content-Type", "application/json");
    if (auth.getToken) {
      const late = new Promise<never>((_, reject) => signal.addEventListener("abort", reject));
      const token: unknown = await Promise.race([auth.getToken(), late]);
      if (typeof token !== "string" || token === "") throw new TypeError("no token");
      headers.set("Authorization", `Bearer ${token}`);
    }
    return headers;
  } catch {
    throw new AdminApiError("TOKEN_ERROR", "no token to send");
  }
}

function trimSlashes(base: string): string {
  let end = base.length;
  while (end > 0 && base[end - 1] === "/") end--;
  return base.slice(0, end);
}

/**
 * Calls `base + path` and returns the body's `data` (the whole body when it
 * has none); throws {@link AdminApiError} on any failure, the token
 * callback's included, within {@link REQUEST_TIMEOUT_MS}.
 */
export async function call(
  base: string,
  path: string,
  auth: Auth,
  method = "GET",
  body?: unknown,
): Promise<unknown> {
  // The abort ends the wait for the token, the request, or the body's read where it stalled.
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), REQUEST_TIMEOUT_MS);
  let response: Response;
  let text: string | null;
  try {
    const headers = await headersOf(auth, method, body !== undefined, deadline.signal);
    try {
      response = await fetch(trimSlashes(base) + path, {
        method,
        headers,
        credentials: auth.credentials,
        signal: deadline.signal,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      text = await boundedText(response);
    } catch {
      throw new AdminApiError("NETWORK_ERROR", "network error");
    }
  } finally {
    clearTimeout(timer);
  }
  let parsed: unknown;
  try {
    parsed = text === null ? null : text === "" ? undefined : JSON.parse(text);
  } catch {
    parsed = null;
  }
  if (!response.ok) {
    const wait = response.status === 429 ? response.headers.get("retry-after") : null;
    throw failure(parsed, response.status, retryAfterOf(wait));
  }
  if (parsed === null) throw new AdminApiError("BAD_RESPONSE", "unreadable response");
  const data = record(parsed);
  return data && "data" in data ? data.data : parsed;
}
