/**
 * The real services of the limits suite: PostgreSQL (`DATABASE_URL`, migration
 * 0007 applied by scripts/start_postgres.sh) and Redis (`REDIS_URL`, from
 * scripts/start_redis.sh). Under CI=true a missing service fails the suite.
 * Opening stores is ./_stores.ts (re-exported here), which Node runs too.
 */
import pg from "pg";
import { databaseReady } from "../postgres/prisma_client.ts";
import {
  connectRedis,
  DATABASE_URL,
  openStore,
  type RealStore,
  REDIS_URL,
  type StoreKind,
} from "./_stores.ts";
import { createRateLimiter, type RateLimiter } from "../../rate_limits/limiter.ts";
import type { RedisScriptClient } from "../../rate_limits/redis/mod.ts";
import { READ_SCRIPT } from "../../rate_limits/redis/_script.ts";

export * from "./_stores.ts";

/** Why a store's service is unusable, or undefined. */
async function probe(kind: StoreKind): Promise<string | undefined> {
  try {
    if (kind === "postgres") {
      if (!DATABASE_URL) return "DATABASE_URL is not set (run scripts/start_postgres.sh)";
      const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
      try {
        await pool.query("SELECT 1 FROM rate_limit_buckets LIMIT 1");
      } finally {
        await pool.end();
      }
    } else {
      if (!REDIS_URL) return "REDIS_URL is not set (run scripts/start_redis.sh)";
      const client = await connectRedis(REDIS_URL, 2_000);
      await client.close();
    }
    return undefined;
  } catch (error) {
    return `${kind} is unusable: ${(error as Error).message}`;
  }
}

/** The stores whose service answers; registers a failing (CI) or skipped suite for the others. */
export async function readyStores(suite: string): Promise<StoreKind[]> {
  const ready: StoreKind[] = [];
  for (const kind of ["postgres", "redis"] as const) {
    if (databaseReady(`${suite} on ${kind}`, await probe(kind))) ready.push(kind);
  }
  return ready;
}

/**
 * A schema of its own, `<label>_<uuid>`, holding what every migration of prisma/migrations creates
 * (applied in order through `admin`, on that schema, as scripts/start_postgres.sh applies them to
 * the database). `drop()` removes it and ends `admin`.
 */
export async function migratedSchema(
  label: string,
): Promise<{ schema: string; admin: pg.Client; drop(): Promise<void> }> {
  const schema = `${label}_${crypto.randomUUID().replaceAll("-", "")}`;
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  const drop = async () => {
    try {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    } finally {
      await admin.end();
    }
  };
  try {
    await admin.query(`CREATE SCHEMA ${schema}; SET search_path TO ${schema}`);
    const folder = new URL("../../prisma/migrations/", import.meta.url);
    const migrations = [];
    for await (const entry of Deno.readDir(folder)) {
      if (entry.isDirectory) migrations.push(entry.name);
    }
    for (const migration of migrations.sort()) {
      await admin.query(await Deno.readTextFile(new URL(`${migration}/migration.sql`, folder)));
    }
  } catch (error) {
    await drop();
    throw error;
  }
  return { schema, admin, drop };
}

/** A store of `kind` (see `openStore`) with a silent limiter on it (5 s timeout). */
export async function openLimiter(kind: StoreKind): Promise<RealStore & { limiter: RateLimiter }> {
  const real = await openStore(kind);
  const limiter = createRateLimiter({ store: real.store, timeoutMs: 5_000, logger: () => {} });
  return { ...real, limiter };
}

/**
 * A client whose scripts read `clock()` in place of the server's `TIME` (a
 * pinned clock on real Redis: the script text is the store's, but for that).
 */
export function pinnedClient(client: RedisScriptClient, clock: () => number): RedisScriptClient {
  return {
    evalSha: () => Promise.reject(new Error("NOSCRIPT pinned")),
    eval: (script, call) => {
      const now = clock();
      const time = `{'${Math.floor(now / 1_000)}', '${(now % 1_000) * 1_000}'}`;
      return client.eval(script.replace("redis.call('TIME')", time), call);
    },
  };
}

/**
 * `client` (node-redis) with scripts sent as text, and the next drain read (`READ_SCRIPT`) of
 * each `holdNextRead()` run at once but answered when its `release` is called: its reply, or
 * with an error, that error.
 */
export function holdingReads(client: RedisScriptClient) {
  const holds: ((reply: Promise<unknown>) => Promise<unknown>)[] = [];
  const held: RedisScriptClient = {
    evalSha: () => Promise.reject(new Error("NOSCRIPT held")),
    eval: (script, call) => {
      const reply = client.eval(script, call);
      const hold = script === READ_SCRIPT ? holds.shift() : undefined;
      return hold === undefined ? reply : hold(reply);
    },
  };
  /** Holds the next read: `read` settles once Redis ran it. */
  const holdNextRead = () => {
    let release!: (error?: Error) => void;
    let ran!: () => void;
    const released = new Promise<Error | undefined>((resolve) => release = resolve);
    const read = new Promise<void>((resolve) => ran = resolve);
    holds.push(async (reply) => {
      const answer = await reply;
      ran();
      const error = await released;
      if (error !== undefined) throw error;
      return answer;
    });
    return { release, read };
  };
  return { client: held, holdNextRead };
}
