/**
 * `CurrentApiKey` parameter decorator.
 *
 * @module
 */
import { createParamDecorator, type ExecutionContext } from "@nestjs/common";
import { getApiKeyContext } from "./api-key-context.ts";

/**
 * Injects the `ApiKeyContext` the guard verified for this request (`undefined`
 * on a route the guard does not protect). Works with any context writer.
 *
 * @example
 * ```ts
 * import { Controller, Get, UseGuards } from "@nestjs/common";
 * import type { ApiKeyContext } from "@saferoute/api-kit/api-keys";
 * import { ApiKeysGuard, CurrentApiKey } from "@saferoute/api-kit/api-keys/nest";
 *
 * @Controller("whoami")
 * @UseGuards(ApiKeysGuard)
 * class WhoAmIController {
 *   @Get()
 *   whoAmI(@CurrentApiKey() apiKey: ApiKeyContext) {
 *     return { tenantId: apiKey.tenantId };
 *   }
 * }
 * ```
 */
export const CurrentApiKey: () => ParameterDecorator = createParamDecorator(
  (_data: unknown, context: ExecutionContext) =>
    getApiKeyContext(context.switchToHttp().getRequest()),
);
