/**
 * HTTP statuses: the one status-range check, the reason-phrase table and the default code and title maps.
 * @module
 */

const REASON_PHRASES: Readonly<Record<number, string>> = Object.freeze({
  100: "Continue",
  101: "Switching Protocols",
  102: "Processing",
  103: "Early Hints",
  200: "OK",
  201: "Created",
  202: "Accepted",
  203: "Non-Authoritative Information",
  204: "No Content",
  205: "Reset Content",
  206: "Partial Content",
  207: "Multi-Status",
  208: "Already Reported",
  226: "IM Used",
  300: "Multiple Choices",
  301: "Moved Permanently",
  302: "Found",
  303: "See Other",
  304: "Not Modified",
  305: "Use Proxy",
  307: "Temporary Redirect",
  308: "Permanent Redirect",
  400: "Bad Request",
  401: "Unauthorized",
  402: "Payment Required",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  406: "Not Acceptable",
  407: "Proxy Authentication Required",
  408: "Request Timeout",
  409: "Conflict",
  410: "Gone",
  411: "Length Required",
  412: "Precondition Failed",
  413: "Content Too Large",
  414: "URI Too Long",
  415: "Unsupported Media Type",
  416: "Range Not Satisfiable",
  417: "Expectation Failed",
  418: "I'm a Teapot",
  421: "Misdirected Request",
  422: "Unprocessable Entity",
  423: "Locked",
  424: "Failed Dependency",
  425: "Too Early",
  426: "Upgrade Required",
  428: "Precondition Required",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  451: "Unavailable For Legal Reasons",
  500: "Internal Server Error",
  501: "Not Implemented",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
  505: "HTTP Version Not Supported",
  506: "Variant Also Negotiates",
  507: "Insufficient Storage",
  508: "Loop Detected",
  510: "Not Extended",
  511: "Network Authentication Required",
});

/**
 * Whether `value` is an integer HTTP status from `min` (default 100) to 599.
 * @example
 * ```ts
 * import { isHttpStatus } from "@saferoute/api-kit/safe-response";
 * isHttpStatus(404); // true
 * isHttpStatus(302, 400); // false: not an error status
 * ```
 */
export function isHttpStatus(value: unknown, min = 100): value is number {
  return Number.isInteger(value) && (value as number) >= min && (value as number) <= 599;
}

/**
 * The reason phrase of a registered HTTP status, or `undefined`.
 * @example
 * ```ts
 * import { reasonPhrase } from "@saferoute/api-kit/safe-response";
 * reasonPhrase(410); // "Gone"
 * reasonPhrase(599); // undefined
 * ```
 */
export function reasonPhrase(status: number): string | undefined {
  return Object.hasOwn(REASON_PHRASES, status) ? REASON_PHRASES[status] : undefined;
}

/**
 * The code of a status outside every map: the upper-snake reason phrase, else `HTTP_<status>`.
 * @example
 * ```ts
 * import { fallbackErrorCode } from "@saferoute/api-kit/safe-response";
 * fallbackErrorCode(418); // "I_AM_A_TEAPOT"
 * ```
 */
export function fallbackErrorCode(status: number): string {
  const phrase = reasonPhrase(status);
  if (phrase === undefined) return `HTTP_${status}`;
  return phrase.replace("'m", " am").replace(/[^A-Za-z0-9]+/g, "_").replace(/^_|_$/g, "")
    .toUpperCase();
}

/** The statuses of the spec's default code and title table. */
const MAPPED_STATUSES = [400, 401, 403, 404, 405, 409, 422, 429, 500, 502, 503];

/** The default error code of each mapped HTTP status; the `errorCodes` option is merged over it. */
export const DEFAULT_ERROR_CODES: Readonly<Record<number, string>> = Object.freeze(
  Object.fromEntries(MAPPED_STATUSES.map((status) => [status, fallbackErrorCode(status)])),
);

/** The default problem title (reason phrase) of each mapped HTTP status. */
export const DEFAULT_PROBLEM_TITLES: Readonly<Record<number, string>> = Object.freeze(
  Object.fromEntries(MAPPED_STATUSES.map((status) => [status, REASON_PHRASES[status]])),
);

/**
 * The default error code of `status`, or `undefined` for an unmapped status.
 * @example
 * ```ts
 * import { lookupErrorCode } from "@saferoute/api-kit/safe-response";
 * lookupErrorCode(429); // "TOO_MANY_REQUESTS"
 * ```
 */
export function lookupErrorCode(status: number): string | undefined {
  return Object.hasOwn(DEFAULT_ERROR_CODES, status) ? DEFAULT_ERROR_CODES[status] : undefined;
}

/**
 * The default problem title of `status`, or `undefined` for an unmapped status.
 * @example
 * ```ts
 * import { lookupProblemTitle } from "@saferoute/api-kit/safe-response";
 * lookupProblemTitle(404); // "Not Found"
 * ```
 */
export function lookupProblemTitle(status: number): string | undefined {
  return Object.hasOwn(DEFAULT_PROBLEM_TITLES, status) ? DEFAULT_PROBLEM_TITLES[status] : undefined;
}

/**
 * The title used in responses: the reason phrase, else `HTTP <status>`.
 * @example
 * ```ts
 * import { problemTitle } from "@saferoute/api-kit/safe-response";
 * problemTitle(599); // "HTTP 599"
 * ```
 */
export function problemTitle(status: number): string {
  return reasonPhrase(status) ?? `HTTP ${status}`;
}
