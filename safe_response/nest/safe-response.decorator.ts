/**
 * `SafeResponse`: explicit wrapping of a route.
 *
 * @module
 */
import { applyDecorators, HttpCode, SetMetadata } from "@nestjs/common";
import { ApiResponse } from "@nestjs/swagger";
import { reasonPhrase } from "../http_status.ts";
import { httpStatus } from "./http-status.ts";
import { ApiSafeComponents } from "./openapi/components.ts";
import { schemaRef } from "./openapi/schemas.ts";
import { RAW_RESPONSE_METADATA } from "./safe-response.constants.ts";

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
  /** Success status, applied with `@HttpCode` (documented as 200 when not given). */
  statusCode?: number;
}

/**
 * Wraps the route's result in the success envelope, also under a class-level
 * `RawResponse()`; `statusCode` sets the status (`@HttpCode`). Documents the
 * basic success envelope (schema `SafeSuccessResponse`, `data` of any type) at
 * `statusCode`, or 200 when not given (give `statusCode: 201` on a `POST`).
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
  const status = httpStatus(options.statusCode ?? 200, "SafeResponse");
  const decorators: Array<MethodDecorator | ClassDecorator> = [
    SetMetadata(RAW_RESPONSE_METADATA, false),
    ApiSafeComponents(),
    ApiResponse({
      status,
      description: options.description ?? reasonPhrase(status) ?? "Success",
      content: { "application/json": { schema: schemaRef("SafeSuccessResponse") } },
    }),
  ];
  if (options.statusCode !== undefined) decorators.push(HttpCode(status));
  return applyDecorators(...decorators);
}
