/**
 * API keys for NestJS: `ApiKeysModule`, `ApiKeysGuard`, the `RequireScope`,
 * `RequireEnvironment` and `CurrentApiKey` decorators, and client-IP resolvers.
 * Works with `@nestjs/platform-express` and `@nestjs/platform-fastify`, with or
 * without `emitDecoratorMetadata`.
 *
 * @example
 * ```ts
 * import { Controller, Get, Module, UseGuards } from "@nestjs/common";
 * import { type ApiKeyContext, InMemoryApiKeyStorage } from "@saferoute/api-kit/api-keys";
 * import {
 *   ApiKeysGuard,
 *   ApiKeysModule,
 *   CurrentApiKey,
 *   RequireScope,
 * } from "@saferoute/api-kit/api-keys/nest";
 *
 * @Controller("orders")
 * @UseGuards(ApiKeysGuard)
 * class OrdersController {
 *   @Get()
 *   @RequireScope("orders", "read")
 *   list(@CurrentApiKey() apiKey: ApiKeyContext) {
 *     return { tenantId: apiKey.tenantId, orders: [] };
 *   }
 * }
 *
 * @Module({
 *   imports: [
 *     ApiKeysModule.forRoot({
 *       peppers: { 1: "a-pepper-of-at-least-thirty-two-bytes" },
 *       storage: new InMemoryApiKeyStorage(),
 *     }),
 *   ],
 *   controllers: [OrdersController],
 * })
 * class AppModule {}
 * ```
 *
 * @module
 */
export {
  API_KEY_CONTEXT_PROPERTY,
  API_KEYS_CLIENT_IP_RESOLVER,
  API_KEYS_CONTEXT_WRITER,
  API_KEYS_ENVIRONMENT_METADATA,
  API_KEYS_SCOPE_METADATA,
} from "./api-keys.constants.ts";
export type {
  ApiKeyClientIpResolver,
  ApiKeyContextWriter,
  ApiKeysModuleAsyncOptions,
  ApiKeysModuleOptions,
} from "./api-keys-module-options.interface.ts";
export { ApiKeysModule } from "./api-keys.module.ts";
export { ApiKeysGuard, type ApiKeysGuardContext } from "./api-keys.guard.ts";
export {
  type ApiKeyHttpErrorBody,
  type ApiKeyHttpErrorCode,
  ApiKeyHttpException,
} from "./api-key-http.exception.ts";
export { RequireScope } from "./require-scope.decorator.ts";
export { RequireEnvironment } from "./require-environment.decorator.ts";
export { CurrentApiKey } from "./current-api-key.decorator.ts";
export { getApiKeyContext } from "./api-key-context.ts";
export { defaultApiKeyClientIpResolver } from "./default-client-ip.resolver.ts";
export {
  trustedProxyClientIpResolver,
  type TrustedProxyClientIpResolverOptions,
} from "./trusted-proxy-client-ip.resolver.ts";
