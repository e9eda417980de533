/**
 * `SafeResponse`: explicit wrapping of a route.
 *
 * @module
 */
import { applyDecorators, HttpCode, SetMetadata } from "@nestjs/common";
import { RAW_RESPONSE_METADATA } from "./safe-response.constants.ts";
import { httpStatus } from "./http-status.ts";

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
  /** Success status, applied with `@HttpCode`. */
  statusCode?: number;
}

/**
 * Wraps the route's result in the success envelope, also under a class-level
 * `RawResponse()`; `statusCode` sets the status (`@HttpCode`).
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
  const decorators: Array<MethodDecorator | ClassDecorator> = [
    SetMetadata(RAW_RESPONSE_METADATA, false),
  ];
  if (options.statusCode !== undefined) {
    decorators.push(HttpCode(httpStatus(options.statusCode, "SafeResponse")));
  }
  return applyDecorators(...decorators);
}
