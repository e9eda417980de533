/**
 * Where the demo keeps its keys: `InMemoryApiKeyStorage` by default, or
 * PostgreSQL through `PrismaApiKeyStorage` when `DATABASE_URL` is set (the
 * generated Prisma Client over `@prisma/adapter-pg`, loaded on demand).
 *
 * @module
 */
import {
  type ApiKeyStorage,
  InMemoryApiKeyStorage,
  type PrismaApiKeyClient,
  PrismaApiKeyStorage,
  type PrismaExpiryNoticeDelegate,
  type PrismaRotationWaitDelegate,
  type PrismaUsageClient,
} from "../api_keys/mod.ts";

/** An opened storage and how to release it. */
export interface DemoStorage {
  /** The storage handed to `ApiKeysModule.forRoot`. */
  storage: ApiKeyStorage;
  /** `memory` or `postgres`. */
  kind: "memory" | "postgres";
  /** Releases connections (a no-op in memory). */
  close(): Promise<void>;
}

/** A Prisma Client that can be closed, with the delegates of migration 0003 and raw SQL (usage). */
interface ClosablePrismaClient extends PrismaApiKeyClient, PrismaUsageClient {
  apiKeyExpiryNotice: PrismaExpiryNoticeDelegate;
  apiKeyRotationWait: PrismaRotationWaitDelegate;
  $disconnect(): Promise<void>;
}

const CLIENT_FILE = new URL("../generated/prisma/client.ts", import.meta.url);

/** Opens an in-memory storage. */
export function openMemoryStorage(): DemoStorage {
  return { storage: new InMemoryApiKeyStorage(), kind: "memory", close: () => Promise.resolve() };
}

/**
 * Opens PostgreSQL at `databaseUrl`, with the expiry notices, the rotations
 * that wait, the keys' rate limits and credits (0008, 0011) and the usage
 * counts (`api_key_usage`). The tables must exist (apply every migration of
 * `prisma/migrations`) and the client must be generated (`prisma generate`).
 */
export async function openPostgresStorage(databaseUrl: string): Promise<DemoStorage> {
  // First: `npm start`'s light install (demo/start.json) has no Prisma packages at all.
  const { PrismaPg } = await import("@prisma/adapter-pg").catch((error) => {
    throw new Error(
      "DATABASE_URL needs the development install: run `npm run deno -- task demo` " +
        `(${(error as Error).message})`,
    );
  });
  let module: { PrismaClient: new (options: unknown) => ClosablePrismaClient };
  try {
    // A computed specifier: `deno check` must not need the generated files.
    module = await import(CLIENT_FILE.href);
  } catch (error) {
    throw new Error(
      "DATABASE_URL is set but the Prisma Client is not generated: run " +
        "`npm run deno -- run -A npm:prisma@7.10.1 generate --schema prisma/schema.prisma` " +
        `(${(error as Error).message})`,
    );
  }
  const client = new module.PrismaClient({
    adapter: new PrismaPg({ connectionString: databaseUrl }),
  });
  return {
    storage: new PrismaApiKeyStorage(client, {
      expiryNotices: client.apiKeyExpiryNotice,
      rotationWaits: client.apiKeyRotationWait,
      storesRateLimits: true,
      storesCredits: true,
      usage: client,
    }),
    kind: "postgres",
    close: () => client.$disconnect(),
  };
}
