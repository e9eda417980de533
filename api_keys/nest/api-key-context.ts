/**
 * Where the guard records each request's verified context, independent of the
 * context writer, so `CurrentApiKey` and `getApiKeyContext` always find it.
 *
 * @module
 */
import type { ApiKeyContext } from "../types.ts";

const contexts = new WeakMap<object, ApiKeyContext>();

/** Records `context` for `request` (called by the guard). */
export function recordApiKeyContext(request: object, context: ApiKeyContext): void {
  contexts.set(request, context);
}

/**
 * The context the guard verified for `request` (Express or Fastify request),
 * or `undefined` when the guard did not run or failed. Works with any context writer.
 *
 * @example
 * ```ts
 * import { getApiKeyContext } from "@saferoute/api-kit/api-keys/nest";
 * function tenantOf(request: object): string | undefined {
 *   return getApiKeyContext(request)?.tenantId;
 * }
 * ```
 */
export function getApiKeyContext(request: object): ApiKeyContext | undefined {
  return typeof request === "object" && request !== null ? contexts.get(request) : undefined;
}
