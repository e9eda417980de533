/**
 * A failed call as one of the element's strings (never the server's raw
 * text), and whether it ends the session (401) or shuts the caller out (403).
 *
 * @module
 */
import { ownValue } from "../_check.ts";
import { AdminApiError, statusCode } from "./_api.ts";
import type { TextName } from "./strings.ts";

/** The string of each known code. */
const CODES: Record<string, TextName> = {
  unauthenticated: "errorUnauthenticated",
  TOKEN_ERROR: "errorUnauthenticated",
  forbidden: "errorForbidden",
  csrf_refused: "errorCsrf",
  NETWORK_ERROR: "errorNetwork",
  BAD_RESPONSE: "errorServer",
  api_key_record_not_found: "errorNotFound",
  api_key_not_rotatable: "errorNotRotatable",
  api_key_name_changed: "renameConflict",
  api_key_escalation_refused: "errorEscalation",
  api_key_invalid_input: "errorInvalid",
  api_key_invalid_time: "errorInvalid",
  invalid_body: "errorInvalid",
  api_key_storage_unavailable: "errorServer",
  not_implemented: "errorUnavailable",
};

/** The string of each HTTP status, for codes not in `CODES`. */
const STATUSES: Record<string, TextName> = {
  400: "errorInvalid",
  401: "errorUnauthenticated",
  403: "errorForbidden",
  404: "errorNotFound",
  409: "errorNotRotatable",
  422: "errorInvalid",
  429: "errorRateLimited",
  501: "errorUnavailable",
};

/** Which string describes `error`. */
export function errorString(error: AdminApiError): TextName {
  if (error.status === 429 && error.retryAfter !== null) return "errorRetryAfter";
  return ownValue(CODES, error.code) ?? ownValue(STATUSES, String(error.status)) ??
    (error.status >= 500 ? "errorServer" : "error");
}

/** `signed-out` (401 or no token), `forbidden` (403 but a CSRF refusal), else `null`. */
export function deniedState(error: AdminApiError): "signed-out" | "forbidden" | null {
  const string = errorString(error);
  return string === "errorUnauthenticated"
    ? "signed-out"
    : string === "errorForbidden"
    ? "forbidden"
    : null;
}

/** A gateway's statuses: it could not get, or wait for, its upstream's answer. */
const GATEWAY_STATUSES = new Set([502, 503, 504]);

/**
 * The request may have been carried out unseen: its answer never came (a network failure, a
 * timeout), came unreadable, or came from a gateway instead (a 502, 503 or 504, or another 5xx
 * whose body names no code: not an answer of the admin routes).
 */
export function answerLost(error: unknown): boolean {
  if (!(error instanceof AdminApiError)) return false;
  return error.code === "NETWORK_ERROR" || error.code === "BAD_RESPONSE" ||
    GATEWAY_STATUSES.has(error.status) ||
    (error.status >= 500 && error.code === statusCode(error.status));
}
