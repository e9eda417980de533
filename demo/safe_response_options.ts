/**
 * The options the demo gives `SafeResponseModule.register`, built once per
 * server: the same object is passed to `applyGlobalErrors` for the OpenAPI
 * document, so the documented global errors and their format (envelope or
 * problem details) are the ones the server sends.
 *
 * @module
 */
import type { SafeErrorResponseConfig } from "../safe_response/mod.ts";
import type { SafeResponseModuleOptions } from "../safe_response/nest/mod.ts";
import { DemoErrors } from "./errors.ts";

/** Base of problem type URIs derived from error codes (problem-details mode). */
export const PROBLEM_BASE_URL = "https://example.com/problems";

/** `meta.apiVersion` of every answer. */
export const DEMO_API_VERSION = "1";

/** Error responses documented on every route of `/openapi.json`. */
export const DEMO_GLOBAL_ERRORS: readonly SafeErrorResponseConfig[] = [
  {
    status: 401,
    code: "api_key_missing",
    message: "No API key in X-API-Key or Authorization: Bearer",
    description: "Missing, malformed, unknown, expired or revoked API key",
  },
  { status: 401, code: "api_key_invalid", message: "The API key is not valid" },
  {
    status: 403,
    code: "api_key_scope_insufficient",
    message: "The API key lacks a required scope",
    description: "Scope, environment or client IP not allowed for this key",
  },
  {
    status: 429,
    code: "TOO_MANY_REQUESTS",
    message: "Too many requests for this API key: wait for the window to reset",
  },
  { status: 500, message: "Internal server error" },
  { status: 503, message: "Service unavailable" },
];

/** The safe-response options of a demo server. */
export function demoSafeResponseOptions(problemDetails: boolean): SafeResponseModuleOptions {
  return {
    requestId: true,
    responseTime: true,
    rateLimit: { standard: true },
    problemDetails: problemDetails ? { baseUrl: PROBLEM_BASE_URL } : false,
    errorCatalog: DemoErrors,
    version: DEMO_API_VERSION,
    swagger: { globalErrors: [...DEMO_GLOBAL_ERRORS] },
  };
}
