/**
 * Deprecated names of the API-key core: the names `@nestarc/api-keys` gave to
 * what this core has under another name (docs/migration.md). They go in the
 * next major version.
 *
 * @module
 */
import type { ApiKeysServiceOptions } from "./service_options.ts";
import type { PrismaApiKeyClient } from "./storage/prisma.ts";

/**
 * The options of `ApiKeysService`; 0.1's `{ storage, hasher, namespace }`
 * fits them as it is.
 *
 * @deprecated Use `ApiKeysServiceOptions` (the same type).
 */
export type ApiKeysServiceDeps = ApiKeysServiceOptions;

/**
 * The database client `PrismaApiKeyStorage` takes.
 *
 * @deprecated Use `PrismaApiKeyClient` (the same type).
 */
export type PrismaLike = PrismaApiKeyClient;
