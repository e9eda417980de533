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
 *
 * @example
 * ```ts
 * import type { PrismaApiKeyClient } from "@saferoute/api-kit/api-keys";
 * declare const prisma: PrismaApiKeyClient; // e.g. a PrismaClient instance
 * ```
 */
export type PrismaLike = PrismaApiKeyClient;
