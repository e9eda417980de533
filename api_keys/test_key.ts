/**
 * `createTestKey`: a one-call key for tests of code protected by API keys.
 *
 * @module
 */
import { normalizeAllowedIpCidrs } from "./ip_allowlist.ts";
import { parseKey } from "./key_format.ts";
import { flattenScopes } from "./scopes.ts";
import type { ApiKeysService } from "./service.ts";
import type { ApiKeyContext, CreateApiKeyResult, CreateTestKeyOptions } from "./types.ts";

/**
 * Result of `createTestKey`: the create result plus the context a verification
 * of the key yields.
 */
export interface CreateTestKeyResult extends CreateApiKeyResult {
  /** Context of the new key. */
  context: ApiKeyContext;
}

/**
 * Creates a key through `service` with test defaults (tenant `test-tenant`,
 * name `test key`, environment `test`, scope `test:write`) and returns it with
 * its context. Emits `api_key.created` like any create; no verification runs.
 *
 * @example
 * ```ts
 * import { ApiKeysService } from "./service.ts";
 * import { InMemoryApiKeyStorage } from "./storage/in_memory.ts";
 * import { createTestKey } from "./test_key.ts";
 * const service = new ApiKeysService({
 *   peppers: { 1: "a-pepper-of-at-least-thirty-two-bytes" },
 *   storage: new InMemoryApiKeyStorage(),
 * });
 * const { key, context } = await createTestKey(service, { scopes: [{ resource: "orders", level: "read" }] });
 * context.scopes; // ["orders:read"]
 * ```
 */
export async function createTestKey(
  service: ApiKeysService,
  options: CreateTestKeyOptions = {},
): Promise<CreateTestKeyResult> {
  const tenantId = options.tenantId ?? "test-tenant";
  const environment = options.environment ?? "test";
  const scopes = options.scopes ?? [{ resource: "test", level: "write" }];
  const result = await service.create({
    tenantId,
    name: options.name ?? "test key",
    environment,
    scopes,
    expiresAt: options.expiresAt,
    createdBy: options.createdBy,
    allowedIpCidrs: options.allowedIpCidrs,
  });
  const allowedIpCidrs = normalizeAllowedIpCidrs(options.allowedIpCidrs);
  const context: ApiKeyContext = {
    keyId: result.id,
    tenantId,
    environment,
    scopes: flattenScopes(scopes),
    prefix: parseKey(result.key)!.prefix,
  };
  if (allowedIpCidrs.length > 0) context.allowedIpCidrs = allowedIpCidrs;
  return { ...result, context };
}
