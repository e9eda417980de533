/**
 * Options of the safe-response module (framework-free types).
 * @module
 */
import type { LegacyKeyLayout } from "../api_keys/key_format.ts";
import type { ErrorCatalog } from "./error_catalog.ts";
import type { ErrorCodeMapper } from "./error_resolution.ts";
import type { FieldSelectionOptions } from "./field_selection.ts";
import type { I18nAdapter } from "./i18n_adapter.ts";
import type { LinkHeaderOption } from "./_link_header.ts";
import type { ValidationDetailsMode } from "./validation_details.ts";

/** Request-id tracking options. */
export interface RequestIdOptions {
  /** Header read and echoed; default `X-Request-Id`. */
  headerName?: string;
  /**
   * Generates an id when the incoming one is missing or unsafe; default a random UUID. A generated
   * id that is not 1 to 128 visible ASCII characters, or a throw (logged), gives a random UUID.
   */
  generator?: () => string;
}

/** Problem-details options. */
export interface ProblemDetailsOptions {
  /** Base of derived problem type URIs (`<baseUrl>/<code-in-kebab-case>`). */
  baseUrl?: string;
}

/** Request-context options: values of a request-context store copied into `meta`. */
export interface ContextOptions {
  /** Meta field name → store key. */
  fields?: Record<string, string>;
  /** Computes extra meta fields from the whole store. */
  resolver?: (store: Record<string, unknown>) => Record<string, unknown>;
}

/** Rate-limit mirroring options. */
export interface RateLimitOptions {
  /** Header prefix; default `X-RateLimit`. */
  headerPrefix?: string;
  /** Also read the IETF `RateLimit`/`RateLimit-Policy` fields when no prefixed one is set (default `false`). */
  standard?: boolean;
}

/** Options of one documented error response. */
export interface SafeErrorResponseOptions {
  /** Error code (default: from the code map). */
  code?: string;
  /** Response description. */
  description?: string;
  /** Example details. */
  details?: unknown;
  /** Example message. */
  message?: string;
}

/** A documented error response: a status, or a status with options. */
export type SafeErrorResponseConfig = number | ({ status: number } & SafeErrorResponseOptions);

/** OpenAPI options (used by the OpenAPI helpers). */
export interface SwaggerOptions {
  /** Error responses added to every route. */
  globalErrors?: SafeErrorResponseConfig[];
}

/** The `version` option: a fixed string, or a function of the request's context. */
export type ApiVersionOption<Context = unknown> =
  | string
  | ((context: Context) => string | undefined);

/**
 * All options of the safe-response module; `Context` is the argument of a `version` function.
 * @example
 * ```ts
 * import type { SafeResponseModuleOptions } from "@saferoute/api-kit/safe-response";
 * const options: SafeResponseModuleOptions = {
 *   requestId: true,
 *   responseTime: true,
 *   problemDetails: { baseUrl: "https://api.example.com/problems" },
 * };
 * ```
 */
export interface SafeResponseModuleOptions<Context = unknown> {
  /** Include `timestamp` (default `true`). */
  timestamp?: boolean;
  /** Include `path` (default `true`). */
  path?: boolean;
  /** Formats the timestamp (default ISO 8601). */
  dateFormatter?: (date: Date) => string;
  /** Custom error code. */
  errorCodeMapper?: ErrorCodeMapper;
  /** Codes merged over the default code map. */
  errorCodes?: Record<number, string>;
  /** Success `code` from the status. */
  successCodeMapper?: (statusCode: number) => string | undefined;
  /** Synchronous transform of the handler result, before the pagination check. */
  transformResponse?: (data: unknown) => unknown;
  /** Request-id tracking (default off). */
  requestId?: boolean | RequestIdOptions;
  /** Add `meta.responseTime` in milliseconds (default `false`). */
  responseTime?: boolean;
  /** RFC 9457 error bodies (default `false`). */
  problemDetails?: boolean | ProblemDetailsOptions;
  /** Request-context values injected into `meta`. */
  context?: ContextOptions;
  /** Message translation: `true` finds the app's nestjs-i18n service (default off). */
  i18n?: boolean | I18nAdapter;
  /** Mirror rate-limit headers into `meta.rateLimit` (default off). */
  rateLimit?: boolean | RateLimitOptions;
  /** Silence the module's warnings about handler result shapes (default `false`). */
  suppressWarnings?: boolean;
  /** OpenAPI options. */
  swagger?: SwaggerOptions;
  /** Pagination links in a `Link` header too (`true`) or only (`"only"`); default `false`. */
  linkHeader?: LinkHeaderOption;
  /** Field selection on every route (default off; the `FieldSelection` decorator wins). */
  fieldSelection?: boolean | FieldSelectionOptions;
  /** Catalog of the keys thrown with `SafeException`. */
  errorCatalog?: ErrorCatalog;
  /** `details` of validation errors: `"messages"` (default) or `"fields"` (`[{ pointer, messages }]`). */
  validationDetails?: ValidationDetailsMode;
  /** `meta.apiVersion` of every response (a route's Nest `@Version` wins over a string). */
  version?: ApiVersionOption<Context>;
  /**
   * Page size of paginated routes when neither the request nor the route sets one; with it, every
   * paginated route parses its query (default off).
   */
  defaultLimit?: number;
  /**
   * Legacy key layouts redacted from the logged error lines too, besides the current one (the
   * API-keys service's `legacyKeyLayouts`; default none).
   */
  legacyKeyLayouts?: readonly LegacyKeyLayout[];
}

/** The error format a route expects: error envelopes or problem details (`problemDetails` decides). */
export type ErrorFormat = "safe" | "problem";
