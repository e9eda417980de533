/**
 * The verifiable audit log of the API-key component: the record types, the
 * hash chain's functions (to verify an export without the database) and the
 * checkpoints. The service records and reads it (`ApiKeysServiceOptions.audit`,
 * `ApiKeysService.auditLog`, `verifyAuditLog`, `exportAuditLog`); see
 * docs/security.md, "The audit log".
 *
 * @example
 * ```ts
 * import { ApiKeysService, InMemoryApiKeyStorage } from "@saferoute/api-kit/api-keys";
 * import { verifyAuditChain } from "@saferoute/api-kit/api-keys/audit";
 *
 * const service = new ApiKeysService({
 *   peppers: { 1: "a-pepper-of-at-least-thirty-two-bytes" },
 *   storage: new InMemoryApiKeyStorage(),
 *   audit: { checkpointKey: "an-audit-key-of-at-least-thirty-two-bytes" },
 * });
 * const { id } = await service.create({ tenantId: "acme", name: "ci", scopes: [{ resource: "orders", level: "read" }] }, {
 *   actor: "alice",
 * });
 * await service.revoke(id, { actor: "bob" });
 * const { records } = await service.auditLog("acme");
 * records.map((r) => r.action); // ["key.revoked", "key.created"]
 * (await service.verifyAuditLog("acme")).ok; // true
 * records.length === 2 && typeof verifyAuditChain === "function";
 * ```
 *
 * @module
 */
export {
  type AuditChainExpectation,
  type AuditExportExpectation,
  auditHash,
  canonicalJson,
  checkpointValid,
  GENESIS_HASH,
  signCheckpoint,
  storedAuditRecord,
  verifyAuditChain,
  verifyAuditExport,
} from "./chain.ts";
export { AUDIT_EXPORT_SCHEMA, type AuditExportSchema } from "./export_schema.ts";
export {
  type ApiKeyAuditOptions,
  AUDIT_ACTIONS,
  type AuditAction,
  type AuditAppend,
  type AuditChainState,
  type AuditChange,
  type AuditCheckpoint,
  type AuditContext,
  type AuditEntry,
  type AuditExportLine,
  type AuditLogPage,
  type AuditLogQuery,
  type AuditProblem,
  type AuditReadQuery,
  type AuditRecord,
  type AuditValue,
  type AuditVerification,
  type AuditVerifyRange,
  type StoredAuditRecord,
} from "./types.ts";
