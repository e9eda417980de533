/**
 * The admin routes of an API keys settings page, framework-free: list,
 * create, read, rename, rotate, revoke and usage of the caller's tenant's
 * keys (docs/settings-page.md). `./api-keys/fetch` and `./api-keys/nest`
 * serve them; nothing is mounted unless the app mounts it.
 *
 * @example
 * ```ts
 * import { ApiKeysService, InMemoryApiKeyStorage } from "@saferoute/api-kit/api-keys";
 * import { createApiKeysAdminHandler } from "@saferoute/api-kit/api-keys/admin";
 *
 * const service = new ApiKeysService({
 *   peppers: { 1: "a-pepper-of-at-least-thirty-two-bytes" },
 *   storage: new InMemoryApiKeyStorage(),
 * });
 * const handle = createApiKeysAdminHandler<{ tenant: string; keyId: string }>({
 *   service,
 *   scopes: ["projects:read", "projects:write"],
 *   tenantOf: (caller) => caller.tenant,
 *   callerKeyIdOf: (caller) => caller.keyId,
 *   canManage: () => true,
 * });
 * ```
 *
 * @module
 */
export { createApiKeysAdminHandler } from "./handler.ts";
export { type Escalation, findEscalation, type KeyPowers } from "./no_escalation.ts";
export type {
  AdminAction,
  AdminConfig,
  AdminKeyLimits,
  AdminKeyLimitsView,
  AdminPermissions,
  AdminPolicy,
  AdminPolicyCheck,
  AdminRequest,
  AdminResponse,
  AdminScopeOffer,
  AdminTarget,
  ApiKeysAdminHandler,
  ApiKeysAdminOptions,
  AuditPage,
  AuditRecordView,
  Capabilities,
  CreateKeyBody,
  ExpiryPreset,
  GracePreset,
  IssuedKey,
  KeyList,
  KeySort,
  KeyStatusFilter,
  KeyView,
  RenameKeyBody,
  RotatedKey,
  RotateKeyBody,
  UsageAnswer,
  UsageBatchAnswer,
} from "./types.ts";
