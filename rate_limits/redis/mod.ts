/**
 * The Redis store of the rate limiter: each check is one `EVALSHA` of one Lua
 * script (all policies at once) on the server's clock, exact across every
 * instance on that server. Takes a connected client of `redis` (node-redis 5
 * or 6, an optional peer) from the caller; anything with its `evalSha` and
 * `eval` works.
 *
 * @example
 * ```ts
 * import { createClient } from "redis";
 * import { createRateLimiter } from "@saferoute/api-kit/rate-limits";
 * import { createRedisRateLimitStore } from "@saferoute/api-kit/rate-limits/redis";
 *
 * const client = await createClient({ url: "redis://127.0.0.1:6379" }).connect();
 * const limiter = createRateLimiter({ store: createRedisRateLimitStore({ client }) });
 * const { allowed } = await limiter.check("key_1", [{ name: "api", limit: 100, windowMs: 60_000 }]);
 * ```
 *
 * @module
 */
import type { CounterResult, RateLimitCounter, RateLimitStore } from "../store.ts";
import { CHECK_SCRIPT } from "./_script.ts";

/** Arguments of a script call, as node-redis takes them. */
export interface RedisScriptArguments {
  /** Keys the script touches. */
  keys: string[];
  /** Other arguments. */
  arguments: string[];
}

/** What the store needs of a Redis client: a node-redis 5/6 client has it. */
export interface RedisScriptClient {
  /** Runs a cached script by its SHA-1. */
  evalSha(sha1: string, options: RedisScriptArguments): Promise<unknown>;
  /** Runs (and caches) a script. */
  eval(script: string, options: RedisScriptArguments): Promise<unknown>;
}

/** Options of `createRedisRateLimitStore`. */
export interface RedisRateLimitStoreOptions {
  /** A connected client; the caller owns and closes it. */
  client: RedisScriptClient;
  /** Key prefix (default `rl:`); keys are `<prefix>{<subject>}:<policy>` and that plus `:n`. */
  prefix?: string;
}

/** Hex SHA-1 of `text` (Redis names scripts by it). */
async function sha1(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-1", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Creates the Redis store. One round trip per check: `EVALSHA`, or `EVAL`
 * once when the server does not hold the script yet (after a restart or
 * `SCRIPT FLUSH`). Throws a `TypeError` without a client.
 *
 * @example
 * ```ts
 * import { createClient } from "redis";
 * import { createRedisRateLimitStore } from "./mod.ts";
 * const store = createRedisRateLimitStore({ client: await createClient().connect() });
 * ```
 */
export function createRedisRateLimitStore(options: RedisRateLimitStoreOptions): RateLimitStore {
  const client = options?.client;
  if (typeof client?.evalSha !== "function" || typeof client.eval !== "function") {
    throw new TypeError("createRedisRateLimitStore needs a connected redis client as `client`");
  }
  const prefix = options.prefix ?? "rl:";
  const hash = sha1(CHECK_SCRIPT);
  return {
    name: "redis",
    async check(counters: readonly RateLimitCounter[]): Promise<CounterResult[]> {
      const keys = counters.flatMap((c) => {
        const log = `${prefix}{${c.subject}}:${c.name}`;
        return [log, `${log}:n`];
      });
      const args = counters.flatMap((c) => [String(c.limit), String(c.windowMs), String(c.cost)]);
      const call = { keys, arguments: args };
      let reply: unknown;
      try {
        reply = await client.evalSha(await hash, call);
      } catch (error) {
        if (!String((error as Error)?.message).startsWith("NOSCRIPT")) throw error;
        reply = await client.eval(CHECK_SCRIPT, call);
      }
      if (!Array.isArray(reply) || reply.length !== counters.length * 3) {
        throw new TypeError("the Redis script answered an unexpected reply");
      }
      return counters.map((_, i) => ({
        allowed: Number(reply[3 * i]) === 1,
        remaining: Number(reply[3 * i + 1]),
        resetMs: Number(reply[3 * i + 2]),
      }));
    },
  };
}
