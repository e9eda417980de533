/**
 * Opening the limits suite's real stores, on Deno from the sources and on Node
 * from the npm build (tests/limits/_node.ts compiles this file): `DATABASE_URL`
 * and `REDIS_URL`, and the store clients at the versions the compatibility
 * matrix tests (tests/consumers/matrix.json, `storeClients`).
 */
import process from "node:process";
import { createRequire } from "node:module";
import type pgModule from "pg";
import type * as redisModule from "redis";
import {
  createPostgresRateLimitStore,
  type PostgresNamedQuery,
} from "../../rate_limits/postgres/mod.ts";
import { createRedisRateLimitStore } from "../../rate_limits/redis/mod.ts";
import { connectWithin } from "./_connect_within.ts";
import type { CounterResult, RateLimitCounter, RateLimitStore } from "../../rate_limits/store.ts";

/** Where the suite's services are. */
export const DATABASE_URL = process.env.DATABASE_URL;
/** Redis URL. */
export const REDIS_URL = process.env.REDIS_URL;

/** The store kinds on a real service. */
export type StoreKind = "postgres" | "redis";

const requireHere = createRequire(import.meta.url);

/**
 * `pkg` at exactly `version` (`deno.json` imports it, so Deno installs it under
 * `node_modules/.deno/`), or the repository's own when `version` is undefined,
 * with the version loaded. Throws when that version is not installed.
 */
export function loadClient<T>(pkg: string, version?: string): { module: T; version: string } {
  const dir = version === undefined
    ? pkg
    : new URL(`../../node_modules/.deno/${pkg}@${version}/node_modules/${pkg}`, import.meta.url)
      .pathname;
  const manifest = requireHere(`${dir}/package.json`) as { version: string };
  return { module: requireHere(dir) as T, version: manifest.version };
}

/**
 * A connected node-redis client as the docs set it up (no offline queue),
 * reconnecting every 100 ms; with `listen` (default) it never crashes the
 * process on a lost connection by itself (a store listens for its errors too).
 * Rejects when not connected within `timeoutMs` (a Redis that is down would
 * be retried forever).
 */
export async function connectRedis(
  url: string,
  timeoutMs = 5_000,
  version?: string,
  listen = true,
) {
  const { createClient } = loadClient<typeof redisModule>("redis", version).module;
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: { connectTimeout: timeoutMs, reconnectStrategy: 100 },
  });
  if (listen) client.on("error", () => {});
  return await connectWithin(
    client,
    timeoutMs,
    `Redis at ${url}`,
    "is it up? (scripts/start_redis.sh, --cluster for a cluster's node)",
  );
}

/** One check through `checkBatch` with a far deadline; throws when the store answers `null`. */
export async function checkOnce(
  store: RateLimitStore,
  counters: readonly RateLimitCounter[],
  timeoutMs = 30_000,
): Promise<readonly CounterResult[]> {
  const { results: [result] } = await store.checkBatch([
    { counters, deadline: Date.now() + timeoutMs },
  ]);
  if (!result) throw new Error("the check's deadline passed");
  return result;
}

/** A store on a real service, with what closes it. */
export interface RealStore {
  kind: StoreKind;
  store: RateLimitStore;
  /**
   * Round trips (Redis commands or PostgreSQL statements) the store sent (a store opened
   * uncounted throws: it has no count).
   */
  sent: () => number;
  close: () => Promise<void>;
}

/**
 * Opens a store of `kind` on `url` (default: the suite's), counting what it
 * sends, through the store client at `version` (default: the repository's).
 * With `counted` false the store gets the client (or pool) itself, as an
 * application passes it: the benchmarks time that, not the counting wrapper.
 */
export async function openStore(
  kind: StoreKind,
  url?: string,
  max = 5,
  version?: string,
  counted = true,
): Promise<RealStore> {
  let sent = 0;
  const count = () => {
    if (!counted) throw new Error("openStore: this store was opened uncounted");
    return sent;
  };
  if (kind === "postgres") {
    const pg = loadClient<typeof pgModule>("pg", version).module;
    // Idle connections stay open: a new one compiles the functions again on its first batch.
    const pool = new pg.Pool({ connectionString: url ?? DATABASE_URL, max, idleTimeoutMillis: 0 });
    // No listener of its own: the store's keeps a terminated backend from ending the process.
    const counting = {
      query: (text: string | PostgresNamedQuery, values?: unknown[]) => (
        sent++, typeof text === "string" ? pool.query(text, values) : pool.query(text)
      ),
      on: (event: "error", listener: (error: unknown) => void) => pool.on(event, listener),
      off: (event: "error", listener: (error: unknown) => void) => pool.off(event, listener),
    };
    return {
      kind,
      store: createPostgresRateLimitStore({ pool: counted ? counting : pool, logger: () => {} }),
      sent: count,
      close: () => pool.end(),
    };
  }
  const client = await connectRedis(url ?? REDIS_URL!, 5_000, version, false);
  const counting = {
    get isOpen() {
      return client.isOpen;
    },
    get isReady() {
      return client.isReady;
    },
    on: (event: "error", listener: (error: unknown) => void) => client.on(event, listener),
    off: (event: "error", listener: (error: unknown) => void) => client.off(event, listener),
    evalSha: (
      sha: string,
      options: { keys: string[]; arguments: string[] },
    ) => (sent++, client.evalSha(sha, options)),
    eval: (
      script: string,
      options: { keys: string[]; arguments: string[] },
    ) => (sent++, client.eval(script, options)),
    sendCommand: (args: string[], options?: object) => (sent++, client.sendCommand(args, options)),
  };
  return {
    kind,
    store: createRedisRateLimitStore({ client: counted ? counting : client, logger: () => {} }),
    sent: count,
    close: () => Promise.resolve(client.destroy()),
  };
}

/** A subject no earlier run used. */
export function freshSubject(label: string): string {
  return `${label}:${crypto.randomUUID()}`;
}
