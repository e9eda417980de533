/**
 * Functions applied to a built OpenAPI document: global error responses, component schema names and
 * route schema shapes.
 * @module
 */
import {
  FIELD_SELECTION_EXTENSION,
  PAGINATED_EXTENSION,
  RESPONSE_HEADERS_EXTENSION,
  SKIP_GLOBAL_ERRORS_EXTENSION,
  SUCCESS_STATUS_EXTENSION,
} from "../_route_metadata.ts";
import { reasonPhrase } from "../http_status.ts";
import { isNullBodyStatus } from "../_null_body.ts";
import type { SafeErrorResponseOptions, SafeResponseModuleOptions } from "../options.ts";
import { PaginationQueryError } from "../pagination_query.ts";
import { resolveSettings, type SafeResponseSettings } from "../settings.ts";
import {
  addProblemMedia,
  documentFieldDetails,
  errorDocumentationOf,
  errorResponses,
} from "./_error_responses.ts";
import { documentHeaders, HEADERS, STATUS_HEADERS, text } from "./_response_headers.ts";
import {
  RATE_LIMIT_FIELD,
  RATE_LIMIT_POLICY_FIELD,
} from "../../api_keys/metering/_rate_limit_fields.ts";
import { documentFieldSelection } from "./_field_selection.ts";
import {
  BASIC_SUCCESS_SCHEMA,
  documentCopy,
  DTO_SCHEMA_NAMES,
  HTTP_STATUS_SCHEMA,
  type OpenApiSchema,
  SAFE_RESPONSE_SCHEMAS,
} from "../_openapi_schemas.ts";

/** The parts of an OpenAPI 3 document read and written here (`OpenAPIObject` fits). */
export interface OpenApiDocumentLike {
  /** The OpenAPI version (`3.0.x` or `3.1.x`): schemas added to a 3.1 document use 3.1's `null` type. */
  openapi?: string;
  /** Path items by path. */
  paths?: Record<string, object>;
  /** Reusable components. */
  components?: { schemas?: Record<string, object> };
}

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/** The 400 a paginated route's query can cause (`PaginationQueryError`). */
const PAGINATION_QUERY_ERROR: SafeErrorResponseOptions & { status: number } = {
  status: 400,
  code: "INVALID_PAGINATION_QUERY",
  message:
    new PaginationQueryError("limit", `must be an integer from 1 to ${Number.MAX_SAFE_INTEGER}`)
      .message,
  description: "A bad pagination query parameter (`page`, `cursor` or `limit`)",
};

interface OperationLike {
  responses?: Record<string, unknown>;
  [key: string]: unknown;
}

/**
 * Adds `options.swagger.globalErrors` to every operation not marked by `SkipGlobalErrors`, never over
 * a response the route documents, with the component schemas; with `validationDetails: "fields"`
 * documents the `details` of the global 400 (a validation error) as `[{ pointer, messages }]` (a
 * route's own 400 stays as the route documents it, and without a global 400 so does a paginated
 * route's `INVALID_PAGINATION_QUERY`). Also documents the response headers sent (on `SkipGlobalErrors`
 * routes too): the request id on every response, a `Deprecated` route's headers on every one (optional: a
 * guard's refusal has none), the pagination `Link` on a success. On a route with field selection (its
 * `FieldSelection`, else the module's `fieldSelection`), documents `data` (each item when paginated)
 * as a `<Model>Selection` copy of its model without `required`, and the module's query parameter.
 * With problem details, adds their `application/problem+json` beside an error response documented
 * only as the envelope (a route's own error decorator, `applyApiKeysAdminRoutes`), as the server
 * sends them. A `SafeResponse` success moves to the status Nest sends (`@HttpCode` read when the
 * document is built). Mutates and returns `document` (idempotent).
 * @example
 * ```ts
 * import { applyGlobalErrors } from "@saferoute/api-kit/safe-response/openapi";
 * const document = applyGlobalErrors({ paths: { "/ping": { get: {} } } }, {
 *   swagger: { globalErrors: [401, { status: 500, message: "Unexpected error" }] },
 * });
 * ```
 */
export function applyGlobalErrors<T extends OpenApiDocumentLike, Context = unknown>(
  document: T,
  options: SafeResponseModuleOptions<Context> = {},
): T {
  const settings = resolveSettings(options);
  const documentation = errorDocumentationOf(settings);
  const responses = errorResponses(settings.globalErrors, documentation, "applyGlobalErrors");
  // A paginated route's with limits: the global errors and its query's 400 (one example per code).
  const paginated = errorResponses(
    [...settings.globalErrors, PAGINATION_QUERY_ERROR],
    documentation,
    "applyGlobalErrors",
  );
  const addComponents = () => {
    const schemas = (document.components ??= {}).schemas ??= {};
    for (const [name, schema] of Object.entries(SAFE_RESPONSE_SCHEMAS)) {
      schemas[name] ??= documentCopy(schema, document);
    }
  };
  const validation400 = settings.validationDetails === "fields" && responses.has(400);
  const rateLimit = rateLimitHeadersOf(settings.rateLimit);
  const rateLimitHeaders = Object.keys(rateLimit);
  const descriptions: Record<string, OpenApiSchema> = {
    ...HEADERS,
    ...(settings.requestId === undefined ? {} : {
      [settings.requestId.headerName]: {
        description: "The request's id (module option `requestId`)",
        schema: { type: "string" },
      },
    }),
    ...rateLimit,
  };
  if (responses.size > 0) addComponents();
  for (const operation of operationsOf(document)) {
    documentSuccessStatus(operation);
    const selection = operation[FIELD_SELECTION_EXTENSION] ?? settings.fieldSelection !== undefined;
    if (selection === true) {
      const parameter = operation[FIELD_SELECTION_EXTENSION] === undefined
        ? settings.fieldSelection // the module's: not documented by a decorator
        : undefined;
      documentFieldSelection(operation, (document.components ??= {}).schemas ??= {}, parameter);
    }
    if (documentation.problem) {
      // The server sends problem details whatever a route's own error decorator (or a guard's) says.
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        if (/^[45]\d\d$/.test(status) && addProblemMedia(Number(status), response, documentation)) {
          addComponents();
        }
      }
    }
    const page = operation[PAGINATED_EXTENSION] as
      | { limits?: unknown; query?: unknown; linkHeader?: unknown }
      | undefined;
    const documented = operation.responses ??= {};
    if (operation[SKIP_GLOBAL_ERRORS_EXTENSION] !== true) {
      // The pipeline parses the query (a bad value: the 400) of a route with limits; a handler's
      // PaginationQuery() of any paginated route.
      const parsed = page !== undefined &&
        (page.limits === true || page.query === true || settings.defaultLimit !== undefined);
      const added = parsed ? paginated : responses;
      if (added === paginated) addComponents();
      for (const [status, response] of added) {
        if (documented[status] !== undefined) continue; // the route's own: never changed
        documented[status] = documentCopy(response, document);
        // Only the global 400 is a validation error: a pagination query's 400 alone is not.
        if (status === 400 && validation400) documentFieldDetails(documented[status]);
      }
    }
    const requestId = settings.requestId === undefined ? [] : [settings.requestId.headerName];
    const routeHeaders = (Array.isArray(operation[RESPONSE_HEADERS_EXTENSION])
      ? operation[RESPONSE_HEADERS_EXTENSION] as unknown[]
      : []).filter((name): name is string =>
        typeof name === "string"
      );
    const linkHeader = page === undefined ? false : page.linkHeader ?? settings.linkHeader;
    for (const [status, response] of Object.entries(documented)) {
      const success = /^2\d\d$/.test(status);
      documentHeaders(response, [
        ...requestId,
        ...routeHeaders, // optional: a guard's refusal (before the interceptor) has none of them
        ...(success && linkHeader ? ["Link"] : []),
        // A 429 too: `ApiKeysGuard` (`xRateLimitHeaders`) sends them with its denial.
        ...(success || status === "429" ? rateLimitHeaders : []),
        ...(STATUS_HEADERS[status] ?? []),
      ], descriptions);
    }
  }
  return document;
}

/**
 * Moves a `SafeResponse` route's (or a composite endpoint's) success to the status Nest sends
 * (`@HttpCode` may be applied after `SafeResponse`; `@Redirect`'s), without content when that status
 * has no body or Nest redirects (with `Location` then), as a string of its own media type when not
 * sent in the envelope (`@Sse`, `@Render`, a non-JSON `@Header`), without content when the handler
 * sends its own (`@Res()` without passthrough: nothing of its body is known).
 */
function documentSuccessStatus(operation: OperationLike): void {
  const mark = operation[SUCCESS_STATUS_EXTENSION] as
    | {
      documented: number;
      described: boolean;
      status: number;
      media?: string | null;
      redirect?: boolean;
      own?: boolean;
    }
    | undefined;
  if (typeof mark !== "object" || mark === null) return;
  const { documented, described, status, media, redirect, own } = mark;
  const responses = operation.responses ??= {};
  const success = responses[documented] as { description?: string; content?: unknown } | undefined;
  if (success === undefined || (status !== documented && responses[status] !== undefined)) return;
  delete responses[documented];
  responses[status] = success;
  if (!described) success.description = reasonPhrase(status) ?? "Success";
  if (redirect === true) {
    delete success.content;
    documentHeaders(success, ["Location"]);
  } else if (isNullBodyStatus(status) || own === true) delete success.content;
  else if (typeof media === "string") success.content = { [media]: { schema: { type: "string" } } };
}

/** The rate-limit headers module option `rateLimit` reads (documented on a success and a 429), by name. */
function rateLimitHeadersOf(
  rateLimit: SafeResponseSettings["rateLimit"],
): Record<string, OpenApiSchema> {
  if (rateLimit === undefined) return {};
  const field = text(
    "IETF RateLimit header field (a structured field), read into `meta.rateLimit`",
  );
  return {
    ...(rateLimit.standard ? { [RATE_LIMIT_FIELD]: field, [RATE_LIMIT_POLICY_FIELD]: field } : {}),
    ...Object.fromEntries(["Limit", "Remaining", "Reset"].map((part) => [
      `${rateLimit.headerPrefix}-${part}`,
      {
        description: `The rate limit's \`${part.toLowerCase()}\`, read into \`meta.rateLimit\``,
        schema: { type: "integer", minimum: 0 },
      },
    ])),
  };
}

/**
 * Options of {@link applySchemaNames}.
 */
export interface SchemaNamesOptions {
  /** This library's component names (`"default"`) or `@nestarc/safe-response`'s (`"dto"`). */
  schemaNames?: "default" | "dto";
}

const SCHEMA_REF = "#/components/schemas/";

/**
 * Renames this library's component schemas and every `$ref` to them (`schemaNames: "dto"`); apply it
 * after `applyGlobalErrors`. A name already taken throws a `TypeError` before any change. Mutates and
 * returns `document` (idempotent).
 * @example
 * ```ts
 * import * as openapi from "@saferoute/api-kit/safe-response/openapi";
 * const built: openapi.OpenApiDocumentLike = { paths: {} };
 * const withErrors = openapi.applyGlobalErrors(built, { swagger: { globalErrors: [401] } });
 * const document = openapi.applySchemaNames(withErrors, { schemaNames: "dto" });
 * document.components?.schemas?.SafeErrorResponseDto; // was SafeErrorResponse
 * ```
 */
export function applySchemaNames<T extends OpenApiDocumentLike>(
  document: T,
  options: SchemaNamesOptions = {},
): T {
  const { schemaNames = "default" } = options;
  if (schemaNames !== "default" && schemaNames !== "dto") {
    throw new TypeError('applySchemaNames: `schemaNames` must be "default" or "dto"');
  }
  const schemas = document.components?.schemas;
  if (schemaNames === "default" || schemas === undefined) return document;
  const renames = new Map<string, string>();
  for (const [name, renamed] of Object.entries(DTO_SCHEMA_NAMES)) {
    if (!Object.hasOwn(schemas, name)) continue;
    if (Object.hasOwn(schemas, renamed)) {
      throw new TypeError(
        `applySchemaNames: the document already has a component \`${renamed}\` (rename it)`,
      );
    }
    renames.set(name, renamed);
  }
  if (renames.size === 0) return document;
  for (const [name, schema] of Object.entries(schemas)) {
    delete schemas[name]; // re-added in order, under the new name where there is one
    schemas[renames.get(name) ?? name] = schema;
  }
  rewriteRefs(document, renames);
  return document;
}

/**
 * Options of {@link applyRouteShapes}.
 */
export interface RouteShapesOptions {
  /** This library's route schemas (`"default"`) or `@nestarc/safe-response` 0.14's (`"0.14"`). */
  shapes?: "default" | "0.14";
}

/** Whether `a` and `b` are the same JSON value (key order aside). */
function sameJson(a: unknown, b: unknown): boolean {
  if (typeof a !== "object" || a === null || typeof b !== "object" || b === null) return a === b;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length &&
    keys.every((key) =>
      Object.hasOwn(b, key) &&
      sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])
    );
}

/** 0.14's schema of a documented error envelope: the component, its example values as properties. */
function seedErrorSchema(ref: string, status: number, example: unknown): OpenApiSchema {
  const error = (example as { error?: Record<string, unknown> } | undefined)?.error ?? {};
  const properties: Record<string, OpenApiSchema> = {
    code: { type: "string", example: error.code },
    message: { type: "string", example: error.message },
  };
  const { details } = error;
  if (details !== undefined) {
    const type = Array.isArray(details) ? "array" : details === null ? undefined : typeof details;
    properties.details = type === "array" || type === "object" || type === "string"
      ? { type, example: details }
      : { example: details };
  }
  return {
    allOf: [{ $ref: ref }, {
      properties: {
        success: { type: "boolean", example: false },
        statusCode: { ...HTTP_STATUS_SCHEMA, example: status },
        error: { type: "object", properties },
      },
    }],
  };
}

/**
 * Rewrites route schemas into `@nestarc/safe-response` 0.14's shapes (`shapes: "0.14"`): an error
 * envelope (a bare `$ref` to the error component) becomes `allOf` of that `$ref` and its example's
 * `success`, `statusCode` and `error` values, and `@SafeResponse()`'s inline envelope an `allOf` of
 * the success component's `$ref` (added when missing). Examples, descriptions and problem details
 * (a `$ref` in 0.14 too) stay. Apply it after `applyGlobalErrors`, before or after
 * `applySchemaNames`. Mutates and returns `document` (idempotent).
 * @example
 * ```ts
 * import * as openapi from "@saferoute/api-kit/safe-response/openapi";
 * const built: openapi.OpenApiDocumentLike = { paths: {} };
 * const withErrors = openapi.applyGlobalErrors(built, { swagger: { globalErrors: [401] } });
 * const document = openapi.applyRouteShapes(withErrors, { shapes: "0.14" });
 * ```
 */
export function applyRouteShapes<T extends OpenApiDocumentLike>(
  document: T,
  options: RouteShapesOptions = {},
): T {
  const { shapes = "default" } = options;
  if (shapes !== "default" && shapes !== "0.14") {
    throw new TypeError('applyRouteShapes: `shapes` must be "default" or "0.14"');
  }
  if (shapes === "default") return document;
  const schemas = document.components?.schemas ?? {};
  const renamed = Object.hasOwn(schemas, DTO_SCHEMA_NAMES.SafeSuccessResponse);
  const successRef = SCHEMA_REF +
    (renamed ? DTO_SCHEMA_NAMES.SafeSuccessResponse : "SafeSuccessResponse");
  const errorRefs = [
    SCHEMA_REF + "SafeErrorResponse",
    SCHEMA_REF + DTO_SCHEMA_NAMES.SafeErrorResponse,
  ];
  let success = false;
  for (const operation of operationsOf(document)) {
    for (const [status, response] of Object.entries(operation.responses ?? {})) {
      const media = (response as { content?: Record<string, OpenApiMedia> } | undefined)
        ?.content?.["application/json"];
      const schema = media?.schema;
      if (media === undefined || schema === undefined) continue;
      if (sameJson(schema, BASIC_SUCCESS_SCHEMA)) {
        media.schema = { allOf: [{ $ref: successRef }] };
        success = true;
      } else if (
        Object.keys(schema).length === 1 && errorRefs.includes(schema.$ref as string)
      ) {
        const example = Object.values(media.examples ?? {})[0]?.value;
        media.schema = seedErrorSchema(schema.$ref as string, Number(status), example);
      }
    }
  }
  if (success && !renamed) {
    const added = (document.components ??= {}).schemas ??= {};
    for (const [name, schema] of Object.entries(SAFE_RESPONSE_SCHEMAS)) {
      added[name] ??= documentCopy(schema, document);
    }
  }
  return document;
}

/** A media type object of a response, as read and written by {@link applyRouteShapes}. */
interface OpenApiMedia {
  schema?: OpenApiSchema;
  examples?: Record<string, { value?: unknown }>;
}

/** Points every `$ref` to a renamed component at its new name (each object visited once). */
function rewriteRefs(document: object, renames: ReadonlyMap<string, string>): void {
  const seen = new Set<object>();
  const pending: object[] = [document];
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    if (seen.has(node)) continue;
    seen.add(node);
    const record = node as Record<string, unknown>;
    const ref = record.$ref;
    if (typeof ref === "string" && ref.startsWith(SCHEMA_REF)) {
      const renamed = renames.get(ref.slice(SCHEMA_REF.length));
      if (renamed !== undefined) record.$ref = SCHEMA_REF + renamed;
    }
    for (const value of Object.values(record)) {
      if (typeof value === "object" && value !== null) pending.push(value);
    }
  }
}

/** Every operation of `document`. */
function* operationsOf(document: OpenApiDocumentLike): Generator<OperationLike> {
  for (const pathItem of Object.values(document.paths ?? {})) {
    for (const method of METHODS) {
      const operation = (pathItem as Record<string, OperationLike | undefined>)[method];
      if (operation !== undefined) yield operation;
    }
  }
}
