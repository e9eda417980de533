/**
 * The OpenAPI marks the runtime decorators leave, written as `@nestjs/swagger`
 * metadata by key string so that `./safe-response/nest` never imports
 * `@nestjs/swagger` (an optional peer): the keys are stable from swagger 7.0
 * to 12.0, and a test pins them against the installed package's `DECORATORS`.
 * The swagger explorer reads them only when the app builds a document.
 *
 * @module
 */

/** `@nestjs/swagger`'s metadata keys this file writes (its `DECORATORS` values). */
export const SWAGGER_METADATA = Object.freeze({
  /** `DECORATORS.API_OPERATION`: the operation object (`ApiOperation`). */
  operation: "swagger/apiOperation",
  /** `DECORATORS.API_EXTENSION`: vendor extensions (`ApiExtension`). */
  extension: "swagger/apiExtension",
  /** `DECORATORS.API_RESPONSE`: responses by status (`ApiResponse`). */
  response: "swagger/apiResponse",
  /** `DECORATORS.API_PARAMETERS`: parameters (`ApiQuery`, `ApiParam`, ...). */
  parameters: "swagger/apiParameters",
});

/** Nest's route-method metadata key (`METHOD_METADATA`, stable from Nest 10 to 12). */
export const NEST_METHOD_METADATA = "method";

/**
 * Vendor extension set to `true` on operations of `SkipGlobalErrors` routes;
 * `applyGlobalErrors` leaves them alone.
 *
 * @example
 * ```ts
 * import { SKIP_GLOBAL_ERRORS_EXTENSION } from "@saferoute/api-kit/safe-response/openapi";
 * SKIP_GLOBAL_ERRORS_EXTENSION; // "x-safe-skip-global-errors"
 * ```
 */
export const SKIP_GLOBAL_ERRORS_EXTENSION = "x-safe-skip-global-errors";

/**
 * Vendor extension holding the `ProblemType` URI of an operation (the `type`
 * of problem details thrown by its handler).
 *
 * @example
 * ```ts
 * import { PROBLEM_TYPE_EXTENSION } from "./_swagger_metadata.ts";
 * PROBLEM_TYPE_EXTENSION; // "x-safe-problem-type"
 * ```
 */
export const PROBLEM_TYPE_EXTENSION = "x-safe-problem-type";

/**
 * The route handlers (methods with a Nest request-method decorator) declared
 * by the class `controller` itself. A class decorator runs after its methods'
 * decorators, so every route is already marked.
 */
export function routeHandlersOf(controller: object): object[] {
  const prototype = (controller as { prototype: object }).prototype;
  const handlers: object[] = [];
  for (const name of Object.getOwnPropertyNames(prototype)) {
    const handler = Object.getOwnPropertyDescriptor(prototype, name)?.value;
    if (typeof handler === "function" && Reflect.hasMetadata(NEST_METHOD_METADATA, handler)) {
      handlers.push(handler);
    }
  }
  return handlers;
}

/** A decorator applying `mark` to the route, or to every route a controller declares. */
function onRoutes(mark: (handler: object) => void): MethodDecorator & ClassDecorator {
  return (target: object, _key?: string | symbol, descriptor?: PropertyDescriptor) => {
    if (descriptor !== undefined) mark(descriptor.value);
    else for (const handler of routeHandlersOf(target)) mark(handler);
  };
}

/**
 * Sets `deprecated: true` on the operation, keeping its other `ApiOperation`
 * fields (in any decorator order).
 */
export function markDeprecatedOperation(): MethodDecorator & ClassDecorator {
  return onRoutes((handler) => {
    const operation = Reflect.getMetadata(SWAGGER_METADATA.operation, handler);
    Reflect.defineMetadata(
      SWAGGER_METADATA.operation,
      { ...operation, deprecated: true },
      handler,
    );
  });
}

/** Sets the vendor extension `name` of the operation (an existing value wins, as in swagger). */
export function markExtension(name: string, value: unknown): MethodDecorator & ClassDecorator {
  return onRoutes((handler) => {
    const extensions = Reflect.getMetadata(SWAGGER_METADATA.extension, handler);
    Reflect.defineMetadata(SWAGGER_METADATA.extension, { [name]: value, ...extensions }, handler);
  });
}

/** Documents the response `response` at `status` of one route handler. */
export function markResponse(handler: object, status: number, response: object): void {
  const responses = Reflect.getMetadata(SWAGGER_METADATA.response, handler);
  Reflect.defineMetadata(SWAGGER_METADATA.response, { ...responses, [status]: response }, handler);
}

/** A query parameter as `ApiQuery` records it (`in: "query"` is added). */
export interface QueryParameter {
  /** Parameter name. */
  name: string;
  /** Whether it is required. */
  required: boolean;
  /** Description. */
  description: string;
  /** Its OpenAPI schema. */
  schema: Record<string, unknown>;
}

/**
 * Documents query `parameters` of one route handler; a query parameter the
 * route already documents by that name (an `ApiQuery`) is kept.
 */
export function markQueryParameters(handler: object, parameters: readonly QueryParameter[]): void {
  const existing: Array<{ name?: unknown; in?: unknown }> =
    Reflect.getMetadata(SWAGGER_METADATA.parameters, handler) ?? [];
  const documented = (name: string) =>
    existing.some((parameter) => parameter.in === "query" && parameter.name === name);
  const added = parameters.filter(({ name }) => !documented(name))
    .map((parameter) => ({ in: "query", ...structuredClone(parameter) }));
  Reflect.defineMetadata(SWAGGER_METADATA.parameters, [...existing, ...added], handler);
}
