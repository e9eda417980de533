/**
 * API keys and safe responses for server APIs: the framework-free cores,
 * every export of `./api-keys` and `./safe-response`. The NestJS
 * bindings live in `./api-keys/nest` and `./safe-response/nest`, the browser
 * client in `./client`.
 *
 * @example
 * ```ts
 * import { ApiKeysService, buildSuccessBody, InMemoryApiKeyStorage } from "@saferoute/api-kit";
 *
 * const service = new ApiKeysService({
 *   peppers: { 1: "a-pepper-of-at-least-thirty-two-bytes" },
 *   storage: new InMemoryApiKeyStorage(),
 * });
 * const { key } = await service.create({
 *   tenantId: "acme",
 *   name: "worker",
 *   scopes: [{ resource: "orders", level: "read" }],
 * });
 * const context = await service.verify(key);
 * const body = buildSuccessBody({ statusCode: 200, data: { tenant: context.tenantId } });
 * console.log(body.success); // true
 * ```
 *
 * @module
 */
export * from "./api_keys/mod.ts";
export * from "./safe_response/mod.ts";
