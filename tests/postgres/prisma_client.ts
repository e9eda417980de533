/**
 * Connects the Prisma storage suite to PostgreSQL: probes `DATABASE_URL`,
 * generates the Prisma Client when `generated/prisma` is missing, and builds
 * a `PrismaClient` over `@prisma/adapter-pg` with an explicit pool size and
 * explicit interactive-transaction limits.
 *
 * Start a server first: `eval "$(bash scripts/start_postgres.sh | tail -n 1)"`.
 *
 * @module
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { PrismaPg } from "@prisma/adapter-pg";
import type { PrismaApiKeyClient, PrismaUsageClient } from "../../api_keys/mod.ts";

/** Connections in the adapter's `pg` pool. */
export const POOL_SIZE = 10;

/**
 * Interactive-transaction limits passed to `PrismaClient`: `maxWait` is how
 * long a `$transaction` may wait for a pooled connection, `timeout` how long
 * it may run. Twenty concurrent rotations share ten connections and each
 * waits for the row lock of the rotated key, so both are generous.
 */
export const TRANSACTION_OPTIONS = { maxWait: 30_000, timeout: 30_000 } as const;

/** The Prisma Client surface the suite uses. */
export interface TestPrismaClient extends PrismaApiKeyClient, PrismaUsageClient {
  /** Closes the pool. */
  $disconnect(): Promise<void>;
}

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CLIENT_FILE = new URL("../../generated/prisma/client.ts", import.meta.url);

/** Whether the suite must fail rather than skip without a database. */
const REQUIRED: boolean = Deno.env.get("CI") === "true";

/**
 * Whether a suite may run: `unavailable` (from `probeDatabase`) is undefined.
 * Otherwise registers `name` once, failing under CI=true (CI never skips a
 * database suite) and skipped elsewhere, and returns false.
 */
export function databaseReady(name: string, unavailable: string | undefined): boolean {
  if (unavailable === undefined) return true;
  if (REQUIRED) {
    describe(name, () => {
      it("needs PostgreSQL under CI=true", () => assert.fail(unavailable));
    });
  } else {
    describe(name, { skip: unavailable }, () => {
      it("runs the suite", () => {});
    });
  }
  return false;
}

/** Why PostgreSQL is unusable, or undefined when it answers and the table exists. */
export async function probeDatabase(url: string | undefined): Promise<string | undefined> {
  if (!url) return "DATABASE_URL is not set (run scripts/start_postgres.sh)";
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
    await client.query("SELECT 1 FROM api_keys LIMIT 1");
    return undefined;
  } catch (error) {
    return `PostgreSQL at DATABASE_URL is unusable: ${(error as Error).message}`;
  } finally {
    await client.end().catch(() => {});
  }
}

/** Generates the Prisma Client into `generated/prisma` when it is missing. */
export async function ensureGenerated(): Promise<void> {
  if (existsSync(CLIENT_FILE)) return;
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "npm:prisma@7.10.1", "generate", "--schema", "prisma/schema.prisma"],
    cwd: ROOT,
    env: { PRISMA_SCHEMA_ENGINE_BINARY: "/bin/true" },
  }).output();
  if (!output.success) {
    throw new Error(`prisma generate failed:\n${new TextDecoder().decode(output.stderr)}`);
  }
}

/** Creates a Prisma Client 7 over `@prisma/adapter-pg` for `url`. */
export async function createPrismaClient(url: string): Promise<TestPrismaClient> {
  await ensureGenerated();
  // A computed specifier: `deno check` must not need the generated files.
  const module = await import(CLIENT_FILE.href) as {
    PrismaClient: new (options: unknown) => TestPrismaClient;
  };
  const adapter = new PrismaPg({ connectionString: url, max: POOL_SIZE });
  return new module.PrismaClient({ adapter, transactionOptions: TRANSACTION_OPTIONS });
}
