/** Fixtures of the PostgreSQL suites of the expiry notices and the rotations that wait. */
import pg from "pg";
import type {
  PrismaApiKeyStorageOptions,
  PrismaExpiryNoticeDelegate,
  PrismaRotationWaitDelegate,
} from "../../api_keys/mod.ts";
import type { TestPrismaClient } from "./prisma_client.ts";

/** Why the tables of migration 0003 are unusable, or undefined. */
export async function probeExpiryTables(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    await client.query("SELECT 1 FROM api_key_expiry_notices, api_key_rotation_waits LIMIT 1");
    return undefined;
  } catch {
    return "the expiry migration (0004_api_key_expiry) is not applied";
  } finally {
    await client.end().catch(() => {});
  }
}

/** Empties the key table and the two tables of migration 0003. */
export async function resetExpiryTables(pool: pg.Pool): Promise<void> {
  await pool.query("TRUNCATE api_keys, api_key_expiry_notices, api_key_rotation_waits");
}

/** The extra delegates of the generated client, as `PrismaApiKeyStorage` takes them. */
export function expiryDelegates(
  prisma: TestPrismaClient,
): Required<Pick<PrismaApiKeyStorageOptions, "expiryNotices" | "rotationWaits">> {
  const client = prisma as TestPrismaClient & {
    apiKeyExpiryNotice: PrismaExpiryNoticeDelegate;
    apiKeyRotationWait: PrismaRotationWaitDelegate;
  };
  return { expiryNotices: client.apiKeyExpiryNotice, rotationWaits: client.apiKeyRotationWait };
}
