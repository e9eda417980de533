/**
 * Validation of {@link SafeResponseModuleOptions} into resolved settings,
 * done once when the module is registered. A bad option throws a `TypeError`
 * naming it.
 *
 * @module
 */
import { compileKeyLayouts } from "../api_keys/key_format.ts";
import type { ErrorCatalog } from "./error_catalog.ts";
import type { ErrorCodeMapper } from "./error_resolution.ts";
import { type FieldSelectionSettings, resolveFieldSelection } from "./field_selection.ts";
import { isHttpStatus } from "./http_status.ts";
import { isUriReference } from "./_route_checks.ts";
import type { I18nAdapter } from "./i18n_adapter.ts";
import type { LinkHeaderOption } from "./_link_header.ts";
import { isContextFieldName } from "./_meta_fields.ts";
import { refuseUnknownOptions } from "./_options.ts";
import { resolveLinkHeader } from "./_link_header.ts";
import type { ValidationDetailsMode } from "./validation_details.ts";
import type {
  ApiVersionOption,
  ContextOptions,
  SafeErrorResponseConfig,
  SafeResponseModuleOptions,
} from "./options.ts";
import { resolvePagination } from "./pagination.ts";
import { DEFAULT_RATE_LIMIT_HEADER_PREFIX } from "./rate_limit.ts";
import { DEFAULT_REQUEST_ID_HEADER } from "./_request_id.ts";

/**
 * Options with defaults applied and shapes checked.
 * @example
 * ```ts
 * import { resolveSettings } from "@saferoute/api-kit/safe-response";
 * const settings = resolveSettings({ requestId: true });
 * settings.requestId?.headerName; // "X-Request-Id"
 * ```
 */
export interface SafeResponseSettings {
  /** Include `timestamp`. */
  timestamp: boolean;
  /** Include `path`. */
  path: boolean;
  /** Timestamp format. */
  dateFormatter: (date: Date) => string;
  /** The `errorCodes` option (merged over the default map when resolving). */
  errorCodes: Readonly<Record<number, string>>;
  /** Custom error code mapper. */
  errorCodeMapper?: ErrorCodeMapper;
  /** Success code mapper. */
  successCodeMapper?: (statusCode: number) => string | undefined;
  /** Result transform. */
  transformResponse?: (data: unknown) => unknown;
  /** Request-id tracking, when on. */
  requestId?: { headerName: string; generator?: () => string };
  /** Add `meta.responseTime`. */
  responseTime: boolean;
  /** Problem details, when on. */
  problemDetails?: { baseUrl?: string };
  /** Request-context injection, when set. */
  context?: ContextOptions;
  /** `"auto"` (find nestjs-i18n) or an adapter, when on. */
  i18n?: "auto" | I18nAdapter;
  /** Rate-limit mirroring, when on (`standard`: also the IETF fields). */
  rateLimit?: { headerPrefix: string; standard: boolean };
  /** Silence shape warnings. */
  suppressWarnings: boolean;
  /** Error responses documented on every route. */
  globalErrors: readonly SafeErrorResponseConfig[];
  /** Pagination links in a `Link` header (a route's `linkHeader` wins). */
  linkHeader: LinkHeaderOption;
  /** Field selection of every route, when on. */
  fieldSelection?: FieldSelectionSettings;
  /** Catalog of `SafeException` keys. */
  errorCatalog?: ErrorCatalog;
  /** `details` of validation errors: the message list or the field details. */
  validationDetails: ValidationDetailsMode;
  /** `meta.apiVersion`: a string or a function of the request's context. */
  version?: ApiVersionOption;
  /** Page size of paginated routes without their own `defaultLimit`, when set. */
  defaultLimit?: number;
  /** A logged line with its API keys redacted: the current layout's and `legacyKeyLayouts`'. */
  redactApiKeys: (text: string) => string;
}

/** Every option with its default (`undefined`: none); also the list of known options. */
const DEFAULTS: Readonly<Record<keyof SafeResponseModuleOptions, unknown>> = Object.freeze({
  timestamp: true,
  path: true,
  dateFormatter: (date: Date) => date.toISOString(),
  errorCodeMapper: undefined,
  errorCodes: undefined,
  successCodeMapper: undefined,
  transformResponse: undefined,
  requestId: false,
  responseTime: false,
  problemDetails: false,
  context: undefined,
  i18n: false,
  rateLimit: false,
  suppressWarnings: false,
  swagger: undefined,
  linkHeader: false,
  fieldSelection: false,
  errorCatalog: undefined,
  validationDetails: "messages",
  version: undefined,
  defaultLimit: undefined,
  legacyKeyLayouts: undefined,
});
const OPTION_NAMES = Object.keys(DEFAULTS);

type Bag = Record<string, unknown>;

function fail(option: string, expected: string): never {
  throw new TypeError(`SafeResponseModule: option \`${option}\` must be ${expected}`);
}

const isBag = (value: unknown): value is Bag =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function bool(value: unknown, option: string): boolean {
  return typeof value === "boolean" ? value : fail(option, "a boolean");
}

function fn<T>(value: unknown, option: string): T | undefined {
  if (value === undefined) return undefined;
  return typeof value === "function" ? value as T : fail(option, "a function");
}

function bag(value: unknown, option: string, keys: string[]): Bag {
  if (!isBag(value)) fail(option, "a boolean or an object");
  for (const key of Object.keys(value)) {
    if (!keys.includes(key)) fail(`${option}.${key}`, `one of ${keys.join(", ")} (unknown key)`);
  }
  return value;
}

const HEADER_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

function header(value: unknown, option: string, fallback: string): string {
  if (value === undefined) return fallback;
  return typeof value === "string" && HEADER_TOKEN.test(value)
    ? value
    : fail(option, "a header name");
}

function errorCodes(value: unknown): Readonly<Record<number, string>> {
  if (value === undefined) return Object.freeze({});
  if (!isBag(value)) fail("errorCodes", "an object mapping HTTP statuses to codes");
  const codes: Record<number, string> = {};
  for (const [key, code] of Object.entries(value)) {
    const status = Number(key);
    if (!isHttpStatus(status)) {
      fail(`errorCodes.${key}`, "keyed by an HTTP status (100-599)");
    }
    if (typeof code !== "string" || code === "") fail(`errorCodes.${key}`, "a non-empty string");
    codes[status] = code;
  }
  return Object.freeze(codes);
}

function requestId(value: unknown): SafeResponseSettings["requestId"] {
  if (value === undefined || value === false) return undefined;
  const options = value === true ? {} : bag(value, "requestId", ["headerName", "generator"]);
  return {
    headerName: header(options.headerName, "requestId.headerName", DEFAULT_REQUEST_ID_HEADER),
    generator: fn<() => string>(options.generator, "requestId.generator"),
  };
}

function problemDetails(value: unknown): SafeResponseSettings["problemDetails"] {
  if (value === undefined || value === false) return undefined;
  if (value === true) return {};
  const { baseUrl } = bag(value, "problemDetails", ["baseUrl"]);
  if (baseUrl === undefined) return {};
  // Each type is `<baseUrl>/<code>`: a query or fragment would hold the code, not the path.
  if (
    typeof baseUrl !== "string" || !URL.canParse(baseUrl) || !isUriReference(baseUrl) ||
    /[?#]/.test(baseUrl)
  ) {
    fail(
      "problemDetails.baseUrl",
      "an absolute URL (an RFC 3986 URI: non-ASCII percent-encoded) without a query or fragment",
    );
  }
  return { baseUrl };
}

function context(value: unknown): ContextOptions | undefined {
  if (value === undefined) return undefined;
  const options = bag(value, "context", ["fields", "resolver"]);
  const result: ContextOptions = {};
  if (options.fields !== undefined) {
    if (!isBag(options.fields)) {
      fail("context.fields", "an object mapping meta fields to store keys");
    }
    for (const [field, key] of Object.entries(options.fields)) {
      if (!isContextFieldName(field)) {
        fail(
          `context.fields.${field}`,
          `another name: \`${field}\` is a built-in meta field or __proto__`,
        );
      }
      if (typeof key !== "string") fail(`context.fields.${field}`, "a store key (string)");
    }
    result.fields = { ...options.fields } as Record<string, string>;
  }
  const resolver = fn<ContextOptions["resolver"]>(options.resolver, "context.resolver");
  if (resolver !== undefined) result.resolver = resolver;
  return result;
}

function i18n(value: unknown): SafeResponseSettings["i18n"] {
  if (value === undefined || value === false) return undefined;
  if (value === true) return "auto";
  if (
    !isBag(value) || typeof value.translate !== "function" ||
    typeof value.resolveLanguage !== "function"
  ) {
    fail("i18n", "a boolean or an adapter with translate() and resolveLanguage()");
  }
  return value as unknown as I18nAdapter;
}

function rateLimit(value: unknown): SafeResponseSettings["rateLimit"] {
  if (value === undefined || value === false) return undefined;
  const options = value === true ? {} : bag(value, "rateLimit", ["headerPrefix", "standard"]);
  return {
    headerPrefix: header(
      options.headerPrefix,
      "rateLimit.headerPrefix",
      DEFAULT_RATE_LIMIT_HEADER_PREFIX,
    ),
    standard: bool(options.standard ?? false, "rateLimit.standard"),
  };
}

function globalErrors(value: unknown): readonly SafeErrorResponseConfig[] {
  if (value === undefined) return [];
  const { globalErrors } = bag(value, "swagger", ["globalErrors"]);
  if (globalErrors === undefined) return [];
  if (!Array.isArray(globalErrors)) fail("swagger.globalErrors", "an array");
  for (const entry of globalErrors) {
    const status = isBag(entry) ? entry.status : entry;
    if (!isHttpStatus(status, 400)) {
      fail("swagger.globalErrors", "a list of error statuses (400-599) or { status, ... } objects");
    }
  }
  return Object.freeze([...globalErrors]);
}

function errorCatalog(value: unknown): ErrorCatalog | undefined {
  if (value === undefined) return undefined;
  return isBag(value) && typeof value.get === "function" && typeof value.has === "function"
    ? value as unknown as ErrorCatalog
    : fail("errorCatalog", "a catalog from defineErrors()");
}

function version(value: unknown): ApiVersionOption | undefined {
  if (value === undefined || typeof value === "function") return value as ApiVersionOption;
  return typeof value === "string" && value !== ""
    ? value
    : fail("version", "a non-empty string or a function");
}

/** The redaction of the current layout's keys and those of `legacyKeyLayouts` (checked). */
function redaction(value: unknown): (text: string) => string {
  const layouts = compileKeyLayouts(value, "SafeResponseModule: option `legacyKeyLayouts`");
  return (text) => layouts.redact(text);
}

/** Who the errors of {@link resolveSettings} name unless told otherwise. */
const OWNER = "SafeResponseModule";

/**
 * Validates options and applies the spec defaults. Throws a `TypeError`
 * naming the first bad or unknown option, after `owner` (default
 * `SafeResponseModule`; `createSafeFetch` for the Fetch binding).
 * @example
 * ```ts
 * import { resolveSettings } from "@saferoute/api-kit/safe-response";
 * resolveSettings({}).timestamp; // true
 * try {
 *   resolveSettings({ responseTime: "yes" as unknown as boolean });
 * } catch (error) {
 *   (error as Error).message; // "SafeResponseModule: option `responseTime` must be a boolean"
 * }
 * ```
 */
export function resolveSettings<Context>(
  options: SafeResponseModuleOptions<Context> = {},
  owner: string = OWNER,
): SafeResponseSettings {
  try {
    return settingsOf(options);
  } catch (error) {
    // Every message of the checks starts with OWNER: name the caller's function instead.
    if (owner === OWNER || !(error instanceof TypeError) || !error.message.startsWith(OWNER)) {
      throw error;
    }
    throw new TypeError(owner + error.message.slice(OWNER.length));
  }
}

/** {@link resolveSettings}, its errors naming `SafeResponseModule`. */
function settingsOf<Context>(options: SafeResponseModuleOptions<Context>): SafeResponseSettings {
  refuseUnknownOptions(options, OPTION_NAMES, OWNER);
  const o: Bag = { ...DEFAULTS };
  for (const [key, value] of Object.entries(options)) if (value !== undefined) o[key] = value;
  return Object.freeze({
    timestamp: bool(o.timestamp, "timestamp"),
    path: bool(o.path, "path"),
    dateFormatter: fn<(date: Date) => string>(o.dateFormatter, "dateFormatter")!,
    errorCodes: errorCodes(o.errorCodes),
    errorCodeMapper: fn<ErrorCodeMapper>(o.errorCodeMapper, "errorCodeMapper"),
    successCodeMapper: fn<(statusCode: number) => string | undefined>(
      o.successCodeMapper,
      "successCodeMapper",
    ),
    transformResponse: fn<(data: unknown) => unknown>(o.transformResponse, "transformResponse"),
    requestId: requestId(o.requestId),
    responseTime: bool(o.responseTime, "responseTime"),
    problemDetails: problemDetails(o.problemDetails),
    context: context(o.context),
    i18n: i18n(o.i18n),
    rateLimit: rateLimit(o.rateLimit),
    suppressWarnings: bool(o.suppressWarnings, "suppressWarnings"),
    globalErrors: globalErrors(o.swagger),
    linkHeader: resolveLinkHeader(o.linkHeader, "SafeResponseModule: option `linkHeader`"),
    fieldSelection: resolveFieldSelection(
      o.fieldSelection,
      "SafeResponseModule option fieldSelection",
    ),
    errorCatalog: errorCatalog(o.errorCatalog),
    validationDetails: o.validationDetails === "messages" || o.validationDetails === "fields"
      ? o.validationDetails
      : fail("validationDetails", '"messages" or "fields"'),
    version: version(o.version),
    defaultLimit: resolvePagination(
      "offset",
      { defaultLimit: o.defaultLimit as number | undefined },
      "SafeResponseModule option",
    ).defaultLimit,
    redactApiKeys: redaction(o.legacyKeyLayouts),
  });
}
