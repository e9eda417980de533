/**
 * `SafeResponse`: explicit wrapping of a route.
 *
 * @module
 */
import { applyDecorators, SetMetadata } from "@nestjs/common";
import { ApiResponse } from "@nestjs/swagger";
import { reasonPhrase } from "../http_status.ts";
import { httpStatus } from "./http-status.ts";
import { ApiSafeComponents } from "./openapi/components.ts";
import { schemaRef } from "./openapi/schemas.ts";
import { routeHandlersOf } from "./route-handlers.ts";
import { NEST_HTTP_CODE_METADATA, RAW_RESPONSE_METADATA } from "./safe-response.constants.ts";

/**
 * Options of `SafeResponse`.
 *
 * @example
 * ```ts
 * import type { SafeResponseOptions } from "@saferoute/api-kit/safe-response/nest";
 * const options: SafeResponseOptions = { statusCode: 201, description: "Created user" };
 * ```
 */
export interface SafeResponseOptions {
  /** Response description (OpenAPI). */
  description?: string;
  /**
   * Success status, sent (`@HttpCode`) and documented. Default: the route's
   * own `@HttpCode`, else 200 (also for a `POST`).
   */
  statusCode?: number;
}

/** The `@HttpCode` status of `handler`, if it has one. */
function httpCodeOf(handler: object): number | undefined {
  return Reflect.getMetadata(NEST_HTTP_CODE_METADATA, handler);
}

/**
 * Wraps the route's result in the success envelope, also under a class-level
 * `RawResponse()`, and documents the basic success envelope (schema
 * `SafeSuccessResponse`, `data` of any type). The status, sent and
 * documented, is `statusCode`, else the route's own `@HttpCode`, else 200,
 * also for a `POST` (Nest would send 201). On a controller it applies to
 * every route the class declares; a route's own `@HttpCode` wins there.
 *
 * @example
 * ```ts
 * import { Controller, Post } from "@nestjs/common";
 * import { SafeResponse } from "@saferoute/api-kit/safe-response/nest";
 *
 * @Controller("users")
 * class UsersController {
 *   @Post()
 *   @SafeResponse({ statusCode: 202, description: "Accepted for creation" })
 *   create() {
 *     return { id: "u1" };
 *   }
 * }
 * ```
 */
export function SafeResponse(
  options: SafeResponseOptions = {},
): MethodDecorator & ClassDecorator {
  const given = options.statusCode === undefined
    ? undefined
    : httpStatus(options.statusCode, "SafeResponse");
  const decorators = (status: number) =>
    applyDecorators(
      SetMetadata(RAW_RESPONSE_METADATA, false),
      ApiSafeComponents(),
      ApiResponse({
        status,
        description: options.description ?? reasonPhrase(status) ?? "Success",
        content: { "application/json": { schema: schemaRef("SafeSuccessResponse") } },
      }),
    );
  return (target: object, key?: string | symbol, descriptor?: PropertyDescriptor) => {
    if (descriptor !== undefined) {
      const status = given ?? httpCodeOf(descriptor.value) ?? 200;
      Reflect.defineMetadata(NEST_HTTP_CODE_METADATA, status, descriptor.value);
      decorators(status)(target, key!, descriptor);
      return;
    }
    const status = given ?? 200;
    for (const handler of routeHandlersOf(target)) {
      Reflect.defineMetadata(NEST_HTTP_CODE_METADATA, httpCodeOf(handler) ?? status, handler);
    }
    (decorators(status) as ClassDecorator)(target as CallableFunction);
  };
}
