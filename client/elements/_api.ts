/**
 * The element's calls to the admin routes: JSON in and out, the app's cookies
 * or a bearer token, the CSRF header on every state-changing request, and
 * errors from the safe-response envelope.
 *
 * @module
 */

/** Largest response body read (characters); a longer one is an error. */
export const MAX_RESPONSE_CHARS = 1_000_000;
/** The routes' default CSRF header, sent on every state-changing request. */
export const CSRF_HEADER: readonly [string, string] = ["X-Requested-With", "api-keys-manager"];

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

/**
 * `Retry-After` (delta-seconds, or an HTTP date: the seconds until it, 0
 * when past) in whole seconds; `null` for none or an unreadable one.
 */
function retryAfterOf(value: string | null, now = Date.now()): number | null {
  if (value === null || value.length > 40) return null;
  const text = value.trim();
  if (/^\d{1,9}$/.test(text)) return Number(text);
  const at = /[a-z]/i.test(text) ? Date.parse(text) : NaN;
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

/** The envelope's `error` (or a problem details' `code` and `detail`) as an {@link AdminApiError}. */
function failure(body: unknown, status: number, retryAfter: number | null): AdminApiError {
  const error = record(record(body)?.error) ?? record(body);
  const text = (value: unknown) => typeof value === "string" ? value : undefined;
  return new AdminApiError(
    text(error?.code) ?? `HTTP_${status}`,
    text(error?.message) ?? text(error?.detail) ?? `HTTP ${status}`,
    status,
    retryAfter,
  );
}

function trimSlashes(base: string): string {
  let end = base.length;
  while (end > 0 && base[end - 1] === "/") end--;
  return base.slice(0, end);
}

/**
 * Calls `base + path` and returns the body's `data` (the whole body when it
 * has none); throws {@link AdminApiError} on any failure, the token
 * callback's included.
 */
export async function call(
  base: string,
  path: string,
  auth: Auth,
  method = "GET",
  body?: unknown,
): Promise<unknown> {
  const headers: Record<string, string> = { Accept: "application/json" };
  if (method !== "GET") {
    const [name, value] = auth.csrf ?? CSRF_HEADER;
    headers[name] = value;
  }
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (auth.getToken) {
    let token: string;
    try {
      token = await auth.getToken();
    } catch {
      throw new AdminApiError("TOKEN_ERROR", "getToken failed");
    }
    headers.Authorization = `Bearer ${token}`;
  }
  let response: Response;
  let text: string;
  try {
    response = await fetch(trimSlashes(base) + path, {
      method,
      headers,
      credentials: auth.credentials,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    text = await response.text();
  } catch {
    throw new AdminApiError("NETWORK_ERROR", "network error");
  }
  let parsed: unknown;
  try {
    parsed = text === "" ? undefined : text.length > MAX_RESPONSE_CHARS ? null : JSON.parse(text);
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
