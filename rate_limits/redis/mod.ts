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
import {
  byKind,
  type CreditCounter,
  type RateLimitCounter,
  type RateLimitStore,
} from "../store.ts";
import { assertCreditChange, refillParams } from "../credits.ts";
import { CHANGE_SCRIPT, CHECK_SCRIPT } from "./_script.ts";

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
  /**
   * Key prefix (default `rl:`); a window's keys are `<prefix>{<subject>}:<policy>`
   * and that plus `:n`, a credit balance's `<prefix>{<subject>}:<name>:c`.
   */
  prefix?: string;
}

/**
 * A balance to write back: credits left at `at` (ms since the epoch, the server's
 * clock). Give them back as the counter's `initial` and `initialAt`.
 */
export interface CreditBalance {
  /** Whose balance. */
  readonly subject: string;
  /** Balance name. */
  readonly name: string;
  /** Credits left. */
  readonly remaining: number;
  /** When, on the server's clock. */
  readonly at: number;
}

/**
 * The Redis store. Credit balances live in Redis (no expiry); write them back
 * with `drainCreditChanges` every `persistIntervalMs` and on close, and pass the
 * last written-back balance as `initial` so a Redis that lost it reloads from there.
 */
export interface RedisRateLimitStore extends RateLimitStore {
  /** Balances spent or changed through this store since the last drain, read now (one script per balance). */
  drainCreditChanges(): Promise<CreditBalance[]>;
  /** See `RateLimitStore.changeCredits`. */
  changeCredits: NonNullable<RateLimitStore["changeCredits"]>;
}

/** Hex SHA-1 of `text` (Redis names scripts by it). */
async function sha1(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-1", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Creates the Redis store. One round trip per check (window and credit counters
 * together): `EVALSHA`, or `EVAL` once when the server does not hold the script
 * yet (after a restart or `SCRIPT FLUSH`). Throws a `TypeError` without a client.
 *
 * @example
 * ```ts
 * import { createClient } from "redis";
 * import { createRedisRateLimitStore } from "./mod.ts";
 * const store = createRedisRateLimitStore({ client: await createClient().connect() });
 * ```
 */
export function createRedisRateLimitStore(
  options: RedisRateLimitStoreOptions,
): RedisRateLimitStore {
  const client = options?.client;
  if (typeof client?.evalSha !== "function" || typeof client.eval !== "function") {
    throw new TypeError("createRedisRateLimitStore needs a connected redis client as `client`");
  }
  const prefix = options.prefix ?? "rl:";
  const hashes = new Map([CHECK_SCRIPT, CHANGE_SCRIPT].map((script) => [script, sha1(script)]));
  const changed = new Map<string, CreditCounter>();

  const run = async (script: string, call: RedisScriptArguments) => {
    try {
      return await client.evalSha(await hashes.get(script)!, call);
    } catch (error) {
      if (!String((error as Error)?.message).startsWith("NOSCRIPT")) throw error;
      return await client.eval(script, call);
    }
  };
  const creditKey = (c: CreditCounter) => `${prefix}{${c.subject}}:${c.name}:c`;
  const creditArgs = (c: CreditCounter) =>
    [c.initial, c.initialAt ?? "", ...refillParams(c.refill)].map(String);

  /** Runs one check; resolves to its answers in order and the server's time. */
  const checkAt = async (counters: readonly RateLimitCounter[]) => {
    const { windows, credits, inOrder } = byKind(counters);
    const keys = windows.flatMap((c) => {
      const log = `${prefix}{${c.subject}}:${c.name}`;
      return [log, `${log}:n`];
    });
    keys.push(...credits.map(creditKey));
    const args = [String(windows.length)];
    for (const c of windows) args.push(String(c.limit), String(c.windowMs), String(c.cost));
    for (const c of credits) args.push(String(c.cost), ...creditArgs(c));
    const reply = await run(CHECK_SCRIPT, { keys, arguments: args });
    if (!Array.isArray(reply) || reply.length !== counters.length * 3 + 1) {
      throw new TypeError("the Redis script answered an unexpected reply");
    }
    const answers = inOrder(counters.map((_, i) => ({
      allowed: Number(reply[3 * i]) === 1,
      remaining: Number(reply[3 * i + 1]),
      resetMs: Number(reply[3 * i + 2]),
    })));
    if (answers.every((a) => a.allowed)) {
      for (const c of credits) if (c.cost > 0) changed.set(creditKey(c), c);
    }
    return { answers, at: Number(reply[reply.length - 1]) };
  };

  return {
    name: "redis",
    check: async (counters) => (await checkAt(counters)).answers,
    async changeCredits(counter, change) {
      const valid = assertCreditChange(change);
      const [how, n] = "set" in valid ? ["set", valid.set] : ["add", valid.add];
      const key = creditKey(counter);
      const reply = await run(CHANGE_SCRIPT, {
        keys: [key],
        arguments: [...creditArgs(counter), how, String(n)],
      });
      if (!Array.isArray(reply) || reply.length !== 2) {
        throw new TypeError("the Redis script answered an unexpected reply");
      }
      changed.set(key, counter);
      return { allowed: true, remaining: Number(reply[0]), resetMs: Number(reply[1]) };
    },
    async drainCreditChanges() {
      const drained = [...changed];
      changed.clear();
      try {
        return await Promise.all(drained.map(async ([, counter]) => {
          const { answers: [read], at } = await checkAt([{ ...counter, cost: 0 }]);
          return { subject: counter.subject, name: counter.name, remaining: read.remaining, at };
        }));
      } catch (error) {
        for (const [key, counter] of drained) if (!changed.has(key)) changed.set(key, counter);
        throw error;
      }
    },
  };
}
