/**
 * The real services of the limits suite: PostgreSQL (`DATABASE_URL`, migration
 * 0007 applied by scripts/start_postgres.sh) and Redis (`REDIS_URL`, from
 * scripts/start_redis.sh). Under CI=true a missing service fails the suite.
 */
import pg from "pg";
import { createClient } from "redis";
import { databaseReady } from "../postgres/prisma_client.ts";
import { createPostgresRateLimitStore } from "../../rate_limits/postgres/mod.ts";
import { createRedisRateLimitStore } from "../../rate_limits/redis/mod.ts";
import type { RateLimitStore } from "../../rate_limits/store.ts";

/** Where the suite's services are. */
export const DATABASE_URL = Deno.env.get("DATABASE_URL");
/** Redis URL. */
export const REDIS_URL = Deno.env.get("REDIS_URL");

/** A connected node-redis client that never crashes the process on a lost connection. */
export async function connectRedis(url: string, timeoutMs = 5_000) {
  const client = createClient({
    url,
    socket: { connectTimeout: timeoutMs, reconnectStrategy: 100 },
  });
  client.on("error", () => {});
  return await client.connect();
}

/** Why a store's service is unusable, or undefined. */
async function probe(kind: "postgres" | "redis"): Promise<string | undefined> {
  try {
    if (kind === "postgres") {
      if (!DATABASE_URL) return "DATABASE_URL is not set (run scripts/start_postgres.sh)";
      const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
      try {
        await pool.query("SELECT 1 FROM rate_limit_counters LIMIT 1");
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

/** A store on a real service, with what closes it. */
export interface RealStore {
  kind: "postgres" | "redis";
  store: RateLimitStore;
  /** Round trips (Redis commands or PostgreSQL statements) the store sent. */
  sent: () => number;
  close: () => Promise<void>;
}

/** Opens a store of `kind` on `url` (default: the suite's), counting what it sends. */
export async function openStore(
  kind: "postgres" | "redis",
  url?: string,
  max = 5,
): Promise<RealStore> {
  let sent = 0;
  if (kind === "postgres") {
    const pool = new pg.Pool({ connectionString: url ?? DATABASE_URL, max });
    pool.on("error", () => {});
    const counted = {
      query: (text: string, values?: unknown[]) => (sent++, pool.query(text, values)),
    };
    return {
      kind,
      store: createPostgresRateLimitStore({ pool: counted }),
      sent: () => sent,
      close: () => pool.end(),
    };
  }
  const client = await connectRedis(url ?? REDIS_URL!);
  const counted = {
    evalSha: (
      sha: string,
      options: { keys: string[]; arguments: string[] },
    ) => (sent++, client.evalSha(sha, options)),
    eval: (
      script: string,
      options: { keys: string[]; arguments: string[] },
    ) => (sent++, client.eval(script, options)),
  };
  return {
    kind,
    store: createRedisRateLimitStore({ client: counted }),
    sent: () => sent,
    close: () => Promise.resolve(client.destroy()),
  };
}

/** The stores whose service answers; registers a failing (CI) or skipped suite for the others. */
export async function readyStores(suite: string): Promise<("postgres" | "redis")[]> {
  const ready: ("postgres" | "redis")[] = [];
  for (const kind of ["postgres", "redis"] as const) {
    if (databaseReady(`${suite} on ${kind}`, await probe(kind))) ready.push(kind);
  }
  return ready;
}

/** A subject no earlier run used. */
export function freshSubject(label: string): string {
  return `${label}:${crypto.randomUUID()}`;
}
