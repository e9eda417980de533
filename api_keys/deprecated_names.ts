/**
 * Deprecated names of the API-key core: the names `@nestarc/api-keys` gave to
 * what this core has under another name (docs/migration.md). They go in the
 * next major version.
 *
 * @module
 */
import type { PrismaApiKeyClient } from "./storage/prisma.ts";

/**
 * The database client `PrismaApiKeyStorage` takes.
 *
 * @deprecated Use `PrismaApiKeyClient` (the same type).
 */
export type PrismaLike = PrismaApiKeyClient;
