/**
 * API keys for NestJS (Express or Fastify, with or without
 * `emitDecoratorMetadata`): module, guard, decorators, client-IP resolvers.
 * The admin controller (`./api-keys/nest/admin`) and the leaked-key helpers
 * (`./api-keys/nest/leaks`) have their own entry points, so an app that uses
 * neither does not load them.
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
  API_KEYS_RATE_LIMIT_METADATA,
  API_KEYS_SCOPE_METADATA,
  type ApiKeyClientIpResolver,
  type ApiKeyContextWriter,
} from "./api_keys.constants.ts";
export {
  type ApiKeyExpiryNoticesOptions,
  ApiKeysModule,
  type ApiKeysModuleAsyncOptions,
  type ApiKeysModuleOptions,
} from "./api_keys.module.ts";
export {
  ApiKeysGuard,
  type ApiKeysGuardContext,
  ApiKeysThrottlerTracker,
  type ApiKeysThrottlerTrackerOptions,
  getApiKeyContext,
} from "./api_keys.guard.ts";
export {
  type ApiKeyHttpErrorBody,
  type ApiKeyHttpErrorCode,
  ApiKeyHttpException,
} from "./api_keys.exception.ts";
export {
  CurrentApiKey,
  RateLimit,
  RequireEnvironment,
  RequireScope,
  SkipApiKey,
} from "./api_keys.decorators.ts";
export {
  defaultApiKeyClientIpResolver,
  trustedProxyClientIpResolver,
  type TrustedProxyClientIpResolverOptions,
} from "./api_keys.client_ip.ts";
export { API_KEYS_OPTIONS, ENVIRONMENT_METADATA, SCOPE_METADATA } from "./deprecated_names.ts";
