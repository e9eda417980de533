/**
 * Functions applied to a built OpenAPI document: `applyGlobalErrors` adds the
 * module's `swagger.globalErrors` to every operation; `applySchemaNames`
 * renames the component schemas.
 *
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

/**
 * The parts of an OpenAPI 3 document that `applyGlobalErrors` reads and
 * writes (`OpenAPIObject` of `@nestjs/swagger` fits).
 * @example
 * ```ts
 * import type { OpenApiDocumentLike } from "@saferoute/api-kit/safe-response/openapi";
 * const document: OpenApiDocumentLike = { paths: { "/ping": { get: { responses: {} } } } };
 * ```
 */
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
 * Adds the error responses of `options.swagger.globalErrors` to every
 * operation of `document`, except operations marked by `SkipGlobalErrors`
 * (`x-safe-skip-global-errors: true`), and never over a response the route
 * already documents for that status. Codes follow `code`, else
 * `options.errorCodes`, else the default map, else the fallback; with
 * `options.problemDetails` they are documented as `application/problem+json`
 * (example `type` derived from `baseUrl`, else `about:blank`). Missing
 * component schemas (`SafeErrorResponse`, `SafeProblemDetails`, ...) are
 * added. With `options.validationDetails: "fields"`, the `details` of every
 * documented 400 response (global or the route's own) is documented as
 * `[{ pointer, messages }]`, the shape then sent for validation errors.
 * Mutates and returns `document`; applying it twice changes nothing.
 * Options are validated as by `SafeResponseModule.register`.
 * @example
 * ```ts
 * import { Module } from "@nestjs/common";
 * import { NestFactory } from "@nestjs/core";
 * import { DocumentBuilder, SwaggerModule } from "@nestjs/swagger";
 * import { SafeResponseModule, type SafeResponseModuleOptions } from "@saferoute/api-kit/safe-response/nest";
 * import { applyGlobalErrors } from "@saferoute/api-kit/safe-response/openapi";
 * const options: SafeResponseModuleOptions = {
 *   swagger: { globalErrors: [401, { status: 500, message: "Unexpected error" }] },
 * };
 * @Module({ imports: [SafeResponseModule.register(options)] })
 * class AppModule {}
 * const app = await NestFactory.create(AppModule);
 * const document = applyGlobalErrors(
 *   SwaggerModule.createDocument(app, new DocumentBuilder().setTitle("API").build()),
 *   options,
 * );
 * SwaggerModule.setup("docs", app, document);
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
 * @example
 * ```ts
 * import type { SchemaNamesOptions } from "@saferoute/api-kit/safe-response/openapi";
 * const options: SchemaNamesOptions = { schemaNames: "dto" };
 * ```
 */
export interface SchemaNamesOptions {
  /**
   * `"default"` (the default) keeps this library's component names
   * (`SafeSuccessResponse`, ...); `"dto"` uses those of
   * `@nestarc/safe-response` (`SafeSuccessResponseDto`, `SafeErrorResponseDto`,
   * `ErrorDetailDto`, `ErrorResponseMetaDto`, `ResponseMetaDto`,
   * `PaginationMetaDto`, `PaginationLinksDto`, `CursorPaginationMetaDto`,
   * `SortMetaDto`, `DeprecationMetaDto`, `RateLimitMetaDto`,
   * `ProblemDetailsDto`), so clients generated from its documents keep
   * compiling.
   */
  schemaNames?: "default" | "dto";
}

const SCHEMA_REF = "#/components/schemas/";

/**
 * Names the component schemas of this library as `options.schemaNames` says:
 * with `"dto"`, each component present is renamed (in place, keeping the
 * order of `components.schemas`) and every `$ref` to it in the document is
 * rewritten; the schemas themselves are unchanged. Apply it last, after
 * `applyGlobalErrors` (which adds components under the default names).
 * Renaming onto a component the document already has (an application DTO
 * of the same name) throws a `TypeError` naming it, before any change.
 * Mutates and returns `document`; applying it twice changes nothing.
 * @example
 * ```ts
 * import { Module } from "@nestjs/common";
 * import { NestFactory } from "@nestjs/core";
 * import { DocumentBuilder, SwaggerModule } from "@nestjs/swagger";
 * import { SafeResponseModule, type SafeResponseModuleOptions } from "@saferoute/api-kit/safe-response/nest";
 * import { applyGlobalErrors, applySchemaNames } from "@saferoute/api-kit/safe-response/openapi";
 * const options: SafeResponseModuleOptions = { swagger: { globalErrors: [401] } };
 * @Module({ imports: [SafeResponseModule.register(options)] })
 * class AppModule {}
 * const app = await NestFactory.create(AppModule);
 * const built = SwaggerModule.createDocument(app, new DocumentBuilder().build());
 * const document = applySchemaNames(applyGlobalErrors(built, options), { schemaNames: "dto" });
 * document.components?.schemas?.SafeSuccessResponseDto; // was SafeSuccessResponse
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
