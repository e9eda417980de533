/**
 * API keys, runtime-neutral core: generation, peppered hashing, verification,
 * authorization, rotation, revocation, storage adapters and their contract.
 * Imports nothing from Nest; Web-standard APIs only.
 *
 * @example
 * ```ts
 * import { ApiKeysService, InMemoryApiKeyStorage } from "@saferoute/api-kit/api-keys";
 *
 * const service = new ApiKeysService({
 *   peppers: { 1: "a-pepper-of-at-least-thirty-two-bytes" },
 *   storage: new InMemoryApiKeyStorage(),
 * });
 * const { key } = await service.create({
 *   tenantId: "acme",
 *   name: "billing worker",
 *   scopes: [{ resource: "invoices", level: "write" }],
 * });
 * const context = await service.authorize(key, {
 *   requiredScope: { resource: "invoices", level: "read" },
 * });
 * console.log(context.tenantId); // "acme"
 *
 * // In a server: the header rules and the checks in one call.
 * const request = new Request("https://api.example/invoices", { headers: { "x-api-key": key } });
 * await service.authorizeRequest((name) => request.headers.get(name), {
 *   requiredScope: { resource: "invoices", level: "read" },
 * });
 * ```
 *
 * @module
 */
export {
  type ApiKeyContext,
  type ApiKeyCreditBalance,
  type ApiKeyCreditBalanceOwner,
  type ApiKeyCreditChange,
  type ApiKeyCredits,
  type ApiKeyCreditsInput,
  type ApiKeyGraceStart,
  type ApiKeyHashCount,
  type ApiKeyHashReplacement,
  type ApiKeyHashReport,
  type ApiKeyHashScheme,
  type ApiKeyPoolCredits,
  type ApiKeyRateLimitPolicy,
  type ApiKeyRateLimitResult,
  type ApiKeyRecord,
  type ApiKeyRecordInput,
  type ApiKeyStatus,
  type ApiKeySummary,
  type ApiKeySummaryCredits,
  type ApiKeyTtlPolicy,
  type ApiKeyVerificationOutcome,
  type AuthorizeOptions,
  type CreateApiKeyInput,
  type CreateApiKeyResult,
  type CreateTestKeyOptions,
  type Environment,
  type HashedSecret,
  type HasherOptions,
  type ImportApiKeyIssue,
  type ImportApiKeyRecord,
  type ImportApiKeysOptions,
  type ImportApiKeysResult,
  type ListApiKeysOptions,
  type NotifyExpiringOptions,
  type NotifyExpiringResult,
  type RequiredScope,
  type RotateApiKeyInput,
  type RotateApiKeyResult,
  type RotateApiKeyStorageInput,
  type Scope,
  type ScopeLevel,
} from "./types.ts";
export {
  ApiKeyAuditNotRecordedError,
  ApiKeyError,
  ApiKeyErrorCode,
  ApiKeyOperationError,
  type ApiKeyOperationErrorCode,
  ApiKeyPrefixCollisionError,
  ApiKeyStorageError,
  ApiKeyValidationError,
  type ApiKeyValidationErrorCode,
} from "./errors.ts";
export type {
  ApiKeyAuditCheckpointEvent,
  ApiKeyAuthFailedEvent,
  ApiKeyAuthorizationDeniedEvent,
  ApiKeyAuthorizationMetric,
  ApiKeyAuthorizationOutcome,
  ApiKeyCreatedEvent,
  ApiKeyCreditsExhaustedEvent,
  ApiKeyCreditsLowEvent,
  ApiKeyEvent,
  ApiKeyExpiringEvent,
  ApiKeyOperationMetric,
  ApiKeyRehashFailedEvent,
  ApiKeyRevokedEvent,
  ApiKeyRotatedEvent,
  ApiKeyRotationCompletedEvent,
  ApiKeyUsedEvent,
  ApiKeyVerificationMetric,
} from "./events.ts";
export {
  API_KEY_REDACT_REGEX,
  type ApiKeyRedactionOptions,
  apiKeyRedactRegex,
  type GeneratedApiKey,
  generateKey,
  type GenerateKeyOptions,
  hasApiKeyLayout,
  LEGACY_KEY_LAYOUTS,
  type LegacyKeyAlphabet,
  type LegacyKeyLayout,
  type LegacyKeyLayoutDescription,
  MAX_API_KEY_LENGTH,
  type ParsedApiKey,
  parseKey,
  redactApiKeys,
} from "./key_format.ts";
export { flattenScopes, scopeSatisfies } from "./scopes.ts";
export { isIpAllowed, normalizeAllowedIpCidrs } from "./ip_allowlist.ts";
export { MIN_PEPPER_BYTES, WebCryptoSha256Hasher } from "./hasher.ts";
export { Sha256Hasher } from "./sha256_hasher.ts";
export {
  API_KEY_STORAGE_METHODS,
  type ApiKeyPageSort,
  type ApiKeyPageStatus,
  type ApiKeyRecordPage,
  type ApiKeyRotationWait,
  type ApiKeyStorage,
  type ApiKeyStorageCapability,
  ApiKeyStorageContractError,
  type ApiKeyStorageFactory,
  type ApiKeyStorageRotateResult,
  type AuditReadAnswer,
  InMemoryApiKeyStorage,
  type ListApiKeyPageOptions,
  type ListExpiringApiKeysOptions,
  type PrismaApiKeyClient,
  type PrismaApiKeyDelegate,
  PrismaApiKeyStorage,
  type PrismaApiKeyStorageOptions,
  type PrismaExpiryNoticeDelegate,
  type PrismaRotationWaitDelegate,
  type PrismaTransactionClient,
  type PrismaUsageClient,
  type RegisterStorageTest,
  runApiKeyStorageContract,
} from "./storage/mod.ts";
export {
  type ApiKeysServiceOptions,
  type ApiKeyVerificationCacheOptions,
} from "./service_options.ts";
export { ApiKeysService } from "./service.ts";
export type { ApiKeyRateLimitResolver } from "./metering/_limits.ts";
export {
  API_KEY_USAGE_REFUSALS,
  type ApiKeyUsageBucket,
  type ApiKeyUsageCounts,
  type ApiKeyUsageKeysReadQuery,
  type ApiKeyUsageMetric,
  type ApiKeyUsageOptions,
  type ApiKeyUsageQuery,
  type ApiKeyUsageReadQuery,
  type ApiKeyUsageRefusalCode,
  type ApiKeyUsageRow,
} from "./metering/usage.ts";
export { createTestKey, type CreateTestKeyResult } from "./test_key.ts";
export type {
  ApiKeyAuditOptions,
  AuditAction,
  AuditAppend,
  AuditChainState,
  AuditChange,
  AuditCheckpoint,
  AuditContext,
  AuditEntry,
  AuditLogPage,
  AuditLogQuery,
  AuditProblem,
  AuditReadQuery,
  AuditRecord,
  AuditValue,
  AuditVerification,
  AuditVerifyRange,
  StoredAuditRecord,
} from "./audit/mod.ts";
export {
  type ApiKeyHeaderReader,
  extractApiKey,
  type ExtractApiKeyOptions,
} from "./extract_api_key.ts";
export {
  type ApiKeyChange,
  type ApiKeyChangeFeed,
  type ApiKeyChangeFeedStatus,
  type ApiKeyChangeKind,
  type ApiKeyChangeListener,
  type ApiKeyChangeNotice,
  type ApiKeyFeedReset,
  type ApiKeyFeedResetReason,
  type ApiKeyFeedSnapshot,
  InMemoryApiKeyChangeFeed,
} from "./change_feed.ts";
export {
  type ApiKeyExposedEvent,
  createPublicRevocationHandler,
  createSecretScanningPartnerHandler,
  githubSecretScanningKeyResolver,
  type GitHubSecretScanningKeyResolverOptions,
  type LeakedKeyHandlerOptions,
  type LeakedKeyService,
  type LeakReportHandler,
  type LeakReportRequest,
  type LeakReportResponse,
  type PublicRevocationHandler,
  type PublicRevocationOptions,
  SECRET_SCANNING_MAX_TOKENS,
  type SecretScanningKeyResolver,
  type SecretScanningPartnerOptions,
  type SecretScanningPatterns,
  secretScanningPatterns,
  type SecretScanningPatternsOptions,
  type SecretScanningPublicKey,
} from "./leaks/mod.ts";
export type { ApiKeysServiceDeps, PrismaLike } from "./deprecated_names.ts";
