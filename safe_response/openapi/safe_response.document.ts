/**
 * Functions applied to a built OpenAPI document: global error responses and component schema names.
 * @module
 */
import { SKIP_GLOBAL_ERRORS_EXTENSION } from "../_route_metadata.ts";
import type { SafeResponseModuleOptions } from "../options.ts";
import { resolveSettings } from "../settings.ts";
import { documentFieldDetails, errorResponses } from "./_error_responses.ts";
import {
  DTO_SCHEMA_NAMES,
  type OpenApiSchema,
  SAFE_RESPONSE_SCHEMAS,
} from "../_openapi_schemas.ts";

/** The parts of an OpenAPI 3 document read and written here (`OpenAPIObject` fits). */
export interface OpenApiDocumentLike {
  /** Path items by path. */
  paths?: Record<string, object>;
  /** Reusable components. */
  components?: { schemas?: Record<string, object> };
}

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

interface OperationLike {
  responses?: Record<string, unknown>;
  [key: string]: unknown;
}

/**
 * Adds `options.swagger.globalErrors` to every operation not marked by `SkipGlobalErrors`, never over
 * a response the route documents, with the component schemas; with `validationDetails: "fields"`
 * documents 400 `details` as `[{ pointer, messages }]`. Mutates and returns `document` (idempotent).
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
  const responses = errorResponses(settings.globalErrors, {
    problem: settings.problemDetails !== undefined,
    errorCodes: settings.errorCodes,
    baseUrl: settings.problemDetails?.baseUrl,
  }, "applyGlobalErrors");
  if (responses.size > 0) {
    const components = document.components ??= {};
    const schemas = components.schemas ??= {};
    for (const [name, schema] of Object.entries(SAFE_RESPONSE_SCHEMAS)) {
      schemas[name] ??= structuredClone(schema);
    }
  }
  for (const operation of operationsOf(document)) {
    if (responses.size > 0 && operation[SKIP_GLOBAL_ERRORS_EXTENSION] !== true) {
      const documented = operation.responses ??= {};
      for (const [status, response] of responses) {
        documented[status] ??= structuredClone(response) as OpenApiSchema;
      }
    }
    if (settings.validationDetails === "fields") documentFieldDetails(operation.responses?.[400]);
  }
  return document;
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
