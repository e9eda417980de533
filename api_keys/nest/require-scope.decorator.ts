/**
 * `RequireScope` route decorator.
 *
 * @module
 */
import { SetMetadata } from "@nestjs/common";
import { assertScopeLevel } from "../scopes.ts";
import type { RequiredScope, ScopeLevel } from "../types.ts";
import { API_KEYS_SCOPE_METADATA } from "./api-keys.constants.ts";

/**
 * Requires a key scope on a controller or route (the method's requirement wins
 * over the class's). `write` implies `read`. The guard answers 403
 * `api_key_scope_insufficient` otherwise. Bad arguments (an empty resource, a
 * level other than `"read"`/`"write"`) throw a `TypeError` when the route is declared.
 *
 * @example
 * ```ts
 * import { Controller, Get, Post, UseGuards } from "@nestjs/common";
 * import { ApiKeysGuard, RequireScope } from "@saferoute/api-kit/api-keys/nest";
 *
 * @Controller("orders")
 * @UseGuards(ApiKeysGuard)
 * @RequireScope("orders", "read")
 * class OrdersController {
 *   @Get()
 *   list() {
 *     return [];
 *   }
 *
 *   @Post()
 *   @RequireScope("orders", "write")
 *   create() {
 *     return { id: "o1" };
 *   }
 * }
 * ```
 */
export function RequireScope(
  resource: string,
  level: ScopeLevel,
): MethodDecorator & ClassDecorator {
  if (typeof resource !== "string" || resource.trim() === "") {
    throw new TypeError("RequireScope: resource must be a non-empty string");
  }
  assertScopeLevel(level, "RequireScope: level");
  const required: RequiredScope = Object.freeze({ resource, level });
  return SetMetadata(API_KEYS_SCOPE_METADATA, required);
}
