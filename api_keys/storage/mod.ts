/**
 * The storage contract of `ApiKeysService` and its adapters: the
 * `ApiKeyStorage` interface, the in-memory and Prisma storages and the
 * contract suite. `./api-keys` re-exports it.
 *
 * @module
 */
export {
  API_KEY_STORAGE_METHODS,
  type ApiKeyPageSort,
  type ApiKeyPageStatus,
  type ApiKeyRecordPage,
  type ApiKeyRotationWait,
  type ApiKeyStorage,
  type ApiKeyStorageCapability,
  type ApiKeyStorageRotateResult,
  type ListApiKeyPageOptions,
  type ListExpiringApiKeysOptions,
} from "./types.ts";
export { InMemoryApiKeyStorage } from "./in_memory.ts";
export {
  type PrismaApiKeyClient,
  type PrismaApiKeyDelegate,
  PrismaApiKeyStorage,
  type PrismaApiKeyStorageOptions,
  type PrismaExpiryNoticeDelegate,
  type PrismaRotationWaitDelegate,
  type PrismaUsageClient,
} from "./prisma.ts";
export {
  ApiKeyStorageContractError,
  type ApiKeyStorageFactory,
  type RegisterStorageTest,
  runApiKeyStorageContract,
} from "./contract.ts";
