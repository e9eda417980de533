/**
 * `applyGlobalErrors`: adds the module's `swagger.globalErrors` to every
 * operation of an OpenAPI document.
 *
 * @module
 */
import { SKIP_GLOBAL_ERRORS_EXTENSION } from "../nest/_swagger_metadata.ts";
import type { SafeResponseModuleOptions } from "../nest/safe_response.module.ts";
import { resolveSettings } from "../settings.ts";
import { documentFieldDetails, errorResponses } from "./_error_responses.ts";
import { type OpenApiSchema, SAFE_RESPONSE_SCHEMAS } from "./_schemas.ts";

/**
 * The parts of an OpenAPI 3 document that `applyGlobalErrors` reads and
 * writes (`OpenAPIObject` of `@nestjs/swagger` fits).
 *
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
 *
 * @example
 * ```ts
 * import { Module } from "@nestjs/common";
 * import { NestFactory } from "@nestjs/core";
 * import { DocumentBuilder, SwaggerModule } from "@nestjs/swagger";
 * import { SafeResponseModule, type SafeResponseModuleOptions } from "@saferoute/api-kit/safe-response/nest";
 * import { applyGlobalErrors } from "@saferoute/api-kit/safe-response/openapi";
 *
 * const options: SafeResponseModuleOptions = {
 *   swagger: { globalErrors: [401, { status: 500, message: "Unexpected error" }] },
 * };
 *
 * @Module({ imports: [SafeResponseModule.register(options)] })
 * class AppModule {}
 *
 * const app = await NestFactory.create(AppModule);
 * const document = applyGlobalErrors(
 *   SwaggerModule.createDocument(app, new DocumentBuilder().setTitle("API").build()),
 *   options,
 * );
 * SwaggerModule.setup("docs", app, document);
 * ```
 */
export function applyGlobalErrors<T extends OpenApiDocumentLike>(
  document: T,
  options: SafeResponseModuleOptions = {},
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

/** Every operation of `document`. */
function* operationsOf(document: OpenApiDocumentLike): Generator<OperationLike> {
  for (const pathItem of Object.values(document.paths ?? {})) {
    for (const method of METHODS) {
      const operation = (pathItem as Record<string, OperationLike | undefined>)[method];
      if (operation !== undefined) yield operation;
    }
  }
}
