/**
 * The Redis store of the rate limiter: each batch of checks is one `EVALSHA`
 * of one Lua script on the server's clock, exact across every instance on that
 * server. Takes a connected client of `redis` (node-redis 6, an optional
 * peer) from the caller; anything with its `evalSha` and `eval` works.
 *
 * Production setup: a client of its own without an offline queue (a check sent while
 * Redis is away would otherwise wait in the client and be applied late), with
 * `socket.socketTimeout`, `pingInterval` and a `reconnectStrategy` that
 * reconnects after a socket timeout (a connection gone silent is replaced), the
 * store's own `error` listener (it attaches one, so a lost connection never
 * ends the process), and `await limiter.ready()` at start-up. Scripts sent
 * through the client's `sendCommand` go without its command timeout (node-redis
 * 6 arms a 5 s timer per command by default): the limiter bounds every call.
 *
 * @example
 * ```ts
 * import { createClient } from "redis";
 * import { createRateLimiter } from "@saferoute/api-kit/rate-limits";
 * import { createRedisRateLimitStore } from "@saferoute/api-kit/rate-limits/redis";
 *
 * const client = await createClient({
 *   url: "redis://127.0.0.1:6379",
 *   disableOfflineQueue: true,
 *   pingInterval: 1_000,
 *   socket: { socketTimeout: 3_000, reconnectStrategy: (n) => Math.min(50 * 2 ** n, 2_000) },
 * }).connect();
 * const limiter = createRateLimiter({ store: createRedisRateLimitStore({ client }) });
 * await limiter.ready();
 * const { allowed } = await limiter.check("key_1", [{ name: "api", limit: 100, windowMs: 60_000 }]);
 * ```
 *
 * @module
 */
import type {
  CounterResult,
  CreditBalance,
  CreditCounter,
  RateLimitStore,
  StoreBatchAnswer,
  StoreCheck,
  WindowCounter,
} from "../store.ts";
import { compileCreditChange } from "../credits.ts";
import { refillParams } from "../_refill.ts";
import { createClockOffset } from "../_clock.ts";
import { byKind, errorMessageOf, reportErrors } from "../_remote.ts";
import { answersWellFormed } from "../_well_formed.ts";
import { hexDigest } from "../_hex_digest.ts";
import { assertKnownOptions, optionalBoolean, optionalFunction } from "../_options.ts";
import { subjectFault } from "../_checks.ts";
import { CHANGE_SCRIPT, CHECK_SCRIPT, READ_SCRIPT, TIME_SCRIPT } from "./_script.ts";

/** Arguments of a script call, as node-redis takes them. */
export interface RedisScriptArguments {
  /** Keys the script touches. */
  keys: string[];
  /** Other arguments. */
  arguments: string[];
}

/**
 * What the store needs of a Redis client: a node-redis 6 client has it. With
 * `isOpen`/`isReady` (node-redis) the store sends nothing while the client is
 * not ready; with `on`, the store listens for its `error` events itself.
 */
export interface RedisScriptClient {
  /** Runs a cached script by its SHA-1. */
  evalSha(sha1: string, options: RedisScriptArguments): Promise<unknown>;
  /** Runs (and caches) a script. */
  eval(script: string, options: RedisScriptArguments): Promise<unknown>;
  /**
   * Sends one command given as its words (node-redis `sendCommand(args, options)`;
   * the store passes `{ timeout: undefined }`: no client-side timer per command):
   * when the client has it (a node-redis client's takes the command first, a
   * cluster's a key, so a `clustered` store does not use it), scripts go
   * through it, cheaper per call than `evalSha`. Typed loosely so that a
   * cluster client (whose `sendCommand` takes a key first) is accepted too.
   */
  sendCommand?(...args: never[]): Promise<unknown>;
  /** Whether `connect()` was called and the client not closed since. */
  readonly isOpen?: boolean;
  /** Whether the connection is up now. */
  readonly isReady?: boolean;
  /** Adds an event listener. */
  on?(event: "error", listener: (error: unknown) => void): unknown;
  /** Removes an event listener. */
  off?(event: "error", listener: (error: unknown) => void): unknown;
}

/** Options of `createRedisRateLimitStore`. */
export interface RedisRateLimitStoreOptions {
  /** A connected client; the caller owns and closes it. */
  client: RedisScriptClient;
  /**
   * Key prefix (default `rl:`); a window counter's key is
   * `<prefix>{<slot>}:<subject>:<policy>:<windowMs>:w` (the slot defaults to
   * the subject), a credit balance's `<prefix>{<subject>}:<name>:c`, or
   * `<prefix>{<slot>}:<subject>:<name>:c` with a slot. 0–64 characters
   * without control characters, `{` or `}` (a brace would be the hash tag).
   */
  prefix?: string;
  /**
   * A Redis Cluster client (node-redis `createCluster`): the limiter then
   * sends one batch per slot (`RateLimitCheckOptions.slot`). Default false;
   * a node-redis cluster client without it is a `TypeError`, and another
   * client's `CROSSSLOT` reply a fault (the check fails closed).
   */
  clustered?: boolean;
  /**
   * Where the client's `error` events go, at most one line per 10 s (default
   * `console.error`); the store's own listener keeps a lost connection from
   * ending the process.
   */
  logger?: (line: string) => void;
}

export type { CreditBalance } from "../store.ts";

/**
 * The Redis store. Credit balances live in Redis (no expiry); write them back
 * with `drainCreditChanges` every `persistIntervalMs` and on close, and pass the
 * last written-back balance as `initial` so a Redis that lost it reloads from there.
 */
export interface RedisRateLimitStore extends RateLimitStore {
  /**
   * Balances spent or changed through this store since the last drain (not
   * one anchored since its last spend: `{ anchor: true }` changes its rule,
   * and its caller writes back the balance answered), read
   * now in one read-only script (nothing written), with `clustered` one per
   * hash tag; a balance Redis no longer holds is left out. A tag that fails,
   * or does not answer by `deadline` (ms since the epoch) when there are
   * several, keeps its balances for the next drain: when others answered, it
   * rejects with an error whose `drained` lists theirs (see
   * `RateLimitStore.drainCreditChanges`). A balance changed after the drain
   * began is neither answered nor kept (see there).
   */
  drainCreditChanges(deadline?: number): Promise<CreditBalance[]>;
  /** See `RateLimitStore.changeCredits`. */
  changeCredits: NonNullable<RateLimitStore["changeCredits"]>;
  /** See `RateLimitStore.anchorsCredits`: `{ anchor: true }` is taken. */
  readonly anchorsCredits: true;
  /** See `RateLimitStore.readCredits`. */
  readCredits: NonNullable<RateLimitStore["readCredits"]>;
  /** See `RateLimitStore.ready`. */
  ready: NonNullable<RateLimitStore["ready"]>;
  /** Removes the store's `error` listener (the client stays open: the caller closes it). */
  close(): void;
}

/**
 * The command options of a script sent through `sendCommand`: no client-side timeout. The
 * limiter's door bounds every call already, and node-redis 6's default one (5 s) arms a
 * timer per command (an `AbortSignal.timeout`), the costliest step of a check on the client.
 */
const NO_CLIENT_TIMEOUT = Object.freeze({ timeout: undefined });

/**
 * The error replies that are a bug or a misconfiguration, never an outage: a value the scripts
 * cannot read at a counter's key (`UNREADABLE`, `WRONGTYPE`: group 1), a batch's keys in several
 * slots (`CROSSSLOT`, group 2: a cluster client given without `clustered`), an ACL or password the
 * server refuses (`NOPERM`, `NOAUTH`, `WRONGPASS`), a script failing as it runs (Redis 7 names
 * its `user_script` line; Redis 6 wraps any such failure in `Error running script`).
 */
const FAULT =
  /^(?:(UNREADABLE|WRONGTYPE)|(CROSSSLOT)|NOPERM|NOAUTH|WRONGPASS) |^ERR (?:Error (?:running|compiling) script|.*user_script:)/s;
/**
 * The outages a script meets as it runs that Redis reports inside such an `ERR` (Redis 6 inside
 * every one; Redis 7 keeps their own code first, as `READONLY …`, except a cluster's): a replica,
 * memory or disk refusing writes, a cluster down or its slot moved. `LOADING`, `BUSY`,
 * `MASTERDOWN`, `CLUSTERDOWN`, `TRYAGAIN`, `MOVED`, `ASK` and the like come first in their reply.
 */
const OUTAGE_IN_SCRIPT = /-(?:READONLY|OOM|MISCONF|NOREPLICAS) |cluster is down|non local key/;

/**
 * A cluster's redirect: an outage to a cluster client (out of redirections during a reshard or a
 * failover), a misconfiguration to a single server's (a plain client sent to one node of a
 * cluster: a check of another node's slot would never count).
 */
const REDIRECT = /^(?:MOVED|ASK) /;

/**
 * A script's error reply that is a bug or a misconfiguration (`FAULT`, not an outage; a
 * `REDIRECT` unless `clustered`) as a `TypeError`: the check fails closed, never passing
 * uncounted. Any other `error` as it is.
 */
function faultOf(error: unknown, clustered: boolean): unknown {
  const message = errorMessageOf(error);
  if (!clustered && REDIRECT.test(message)) {
    return new TypeError(
      `the Redis store's server is a node of a Redis Cluster: give a cluster client (createCluster) and clustered: true (${message})`,
      { cause: error },
    );
  }
  const fault = FAULT.exec(message);
  if (fault === null || OUTAGE_IN_SCRIPT.test(message)) return error;
  const what = fault[1] !== undefined
    ? " holds a value it cannot read"
    : fault[2] !== undefined
    ? "'s batch spans hash slots: a Redis Cluster client needs clustered: true"
    : "'s script failed: a misconfiguration (the client's user, password or ACL) or a bug";
  return new TypeError(
    `the Redis store${what} (${message.replace(/ script: .*$/s, "")})`,
    { cause: error },
  );
}

/**
 * The reply of a script as finite numbers (converted in place: the reply is the
 * store's own), of `length` (a function of the reply), else a `TypeError`.
 */
function numbers(reply: unknown, length?: (reply: unknown[]) => boolean): number[] {
  if (!Array.isArray(reply) || (length && !length(reply))) {
    throw new TypeError("the Redis script answered an unexpected reply");
  }
  for (let i = 0; i < reply.length; i++) {
    let n = reply[i];
    if (typeof n !== "number") reply[i] = n = Number(n);
    if (!Number.isFinite(n)) throw new TypeError("the Redis script answered an unexpected reply");
  }
  return reply;
}

/** The counter `ready()` sends past its deadline: its key is under the prefix, never read. */
const PROBE: WindowCounter = Object.freeze({
  kind: "window",
  subject: "ready",
  name: "ready",
  limit: 1,
  windowMs: 1_000,
  cost: 1,
});

const LABEL = "createRedisRateLimitStore";
/** Longest `prefix`. */
const MAX_PREFIX_LENGTH = 64;
/** The options taken; any other is a `TypeError` (a misspelt `clustered` would leave a cluster single-node). */
const OPTIONS = Object.keys(
  { client: true, prefix: true, clustered: true, logger: true } satisfies Record<
    keyof RedisRateLimitStoreOptions,
    true
  >,
);

/**
 * Creates the Redis store. One round trip per batch (every check's window and
 * credit counters together): `EVALSHA`, or `EVAL` once when the server does not
 * hold the script yet (after a restart or `SCRIPT FLUSH`). Before its first
 * batch it reads the server's clock once (a deadline is compared there).
 * Throws a `TypeError` without a client, for an unknown option, a
 * `clustered` that is not a boolean, or a cluster client (node-redis
 * `createCluster`) without `clustered: true`.
 *
 * @example
 * ```ts
 * import { createClient } from "redis";
 * import { createRedisRateLimitStore } from "./mod.ts";
 * const client = await createClient({ disableOfflineQueue: true }).connect();
 * const store = createRedisRateLimitStore({ client });
 * await store.ready();
 * ```
 */
export function createRedisRateLimitStore(
  options: RedisRateLimitStoreOptions,
): RedisRateLimitStore {
  assertKnownOptions(options, OPTIONS, LABEL, { option: "client", method: "evalSha" });
  const client = options?.client;
  if (typeof client?.evalSha !== "function" || typeof client.eval !== "function") {
    throw new TypeError("createRedisRateLimitStore needs a connected redis client as `client`");
  }
  const clustered = optionalBoolean(options.clustered, "clustered", LABEL) ?? false;
  // node-redis `createCluster`'s client: as a single server's, a batch's keys would span slots.
  if (!clustered && typeof (client as { getSlotMaster?: unknown }).getSlotMaster === "function") {
    throw new TypeError(`${LABEL}: a Redis Cluster client needs clustered: true`);
  }
  const logger = optionalFunction(options.logger, "logger", LABEL);
  const prefix = options.prefix ?? "rl:";
  // Written before the hash tag: a brace in it would be the tag (every key of a check elsewhere).
  if (
    typeof prefix !== "string" || prefix.length > MAX_PREFIX_LENGTH ||
    (prefix !== "" && subjectFault(prefix) !== undefined)
  ) {
    throw new TypeError(
      `${LABEL}: prefix must be 0-${MAX_PREFIX_LENGTH} characters without control characters, { or }`,
    );
  }
  const scripts = [CHECK_SCRIPT, CHANGE_SCRIPT, READ_SCRIPT, TIME_SCRIPT];
  // Redis names a script by its SHA-1.
  const hashes = new Map(scripts.map((script) => [script, hexDigest("SHA-1", script)]));
  /** The SHA-1s computed so far (a call then sends without awaiting one). */
  const known = new Map<string, string>();
  const changed = new Map<string, CreditCounter>();
  /** Credit changes answered so far (a drain notes the number when it begins). */
  let changes = 0;
  /** Drains begun and not settled. */
  let draining = 0;
  /**
   * While a drain is pending, each balance's last change (its number in `changes`): a drain
   * begun before it neither answers that balance nor, failing, puts it back (the change
   * supersedes what it read: drained again as changed, or, kept and anchored, written back by
   * its caller). Cleared once no drain is pending.
   */
  const changedSince = new Map<string, number>();
  const clock = createClockOffset();
  const stopReporting = reportErrors(client, "redis", logger);

  /** The client's `sendCommand(args, options)`, unless it is a cluster's (whose first argument is a key). */
  const raw = !clustered && typeof client.sendCommand === "function" &&
      client.sendCommand.length <= 2
    ? (client.sendCommand as (args: string[], options: object) => Promise<unknown>).bind(client)
    : undefined;
  /**
   * `verb` (`EVALSHA` or `EVAL`) of `script` (its SHA-1 or text) with `words` (a command's
   * words from the fourth on: the number of keys, the keys, the other arguments), sent: as
   * one command's words (the first two set here), or through `evalSha`/`eval`.
   */
  const sendAs = (verb: string, script: string, words: string[]) => {
    if (raw === undefined) {
      const n = Number(words[2]);
      const call = { keys: words.slice(3, 3 + n), arguments: words.slice(3 + n) };
      return verb === "EVAL" ? client.eval(script, call) : client.evalSha(script, call);
    }
    words[0] = verb;
    words[1] = script;
    return raw(words, NO_CLIENT_TIMEOUT);
  };
  /** The words of a script call with `keys` and `args` (the verb and script left to `sendAs`). */
  const wordsOf = (keys: readonly string[], args: readonly string[]) => [
    "",
    "",
    String(keys.length),
    ...keys,
    ...args,
  ];
  /** A reply of a call sent at `sentAt` (`clock.now()`), its last number (the server's time) observed. */
  const observed = (reply: unknown, sentAt: number) => {
    const at = Array.isArray(reply) ? reply[reply.length - 1] : reply;
    clock.observe(Number(at), sentAt);
    return reply;
  };
  /**
   * Sends one script (`EVALSHA`, or `EVAL` when the server does not hold it),
   * never while the client is not ready (nothing queued), as sent at `sentAt`
   * (`clock.now()`, or the caller's reading that converted its deadlines);
   * observes the time it answers last (or resolves to `read(reply)`, which
   * observes it: one step for both). No wait of its own: the limiter's door
   * bounds every call.
   */
  const run = <T = unknown>(
    script: string,
    words: string[],
    sentAt = clock.now(),
    read: (reply: unknown) => T = (reply) => observed(reply, sentAt) as T,
  ): Promise<T> => {
    if (client.isOpen === false) {
      return Promise.reject(
        new TypeError(
          "the Redis client of createRedisRateLimitStore is not connected: " +
            "call `await client.connect()` first",
        ),
      );
    }
    if (client.isReady === false) {
      return Promise.reject(new Error("the Redis client is not connected now; nothing was sent"));
    }
    const sha = known.get(script);
    if (sha === undefined) {
      return hashes.get(script)!.then((hash) => {
        known.set(script, hash);
        return run(script, words, sentAt, read);
      });
    }
    let sent: Promise<unknown>;
    try {
      sent = sendAs("EVALSHA", sha, words);
    } catch (error) {
      return Promise.reject(error);
    }
    return sent.then(read, (error) => {
      if (!errorMessageOf(error).startsWith("NOSCRIPT")) throw faultOf(error, clustered);
      // The first words stay as sent.
      return sendAs("EVAL", script, words.slice()).then(
        read,
        (e) => Promise.reject(faultOf(e, clustered)),
      );
    });
  };
  /** Reads the server's clock once when no round trip has been seen (a deadline is never sent unknown). */
  const knowClock = async () => {
    if (!clock.known) await run(TIME_SCRIPT, wordsOf([], []));
  };
  /** `deadline` (local ms) on the server's clock, for a call sent at `sentAt` (`clock.now()`). */
  const onServer = (deadline: number, sentAt: number) =>
    String(clock.toServer(deadline, sentAt) ?? -1);
  const creditKey = (c: CreditCounter) =>
    c.slot === undefined
      ? `${prefix}{${c.subject}}:${c.name}:c`
      : `${prefix}{${c.slot}}:${c.subject}:${c.name}:c`;
  const windowKey = (w: WindowCounter) =>
    `${prefix}{${w.slot ?? w.subject}}:${w.subject}:${w.name}:${w.windowMs}:w`;
  const creditArgs = (c: CreditCounter) =>
    [c.initial, c.initialAt ?? "", ...refillParams(c.refill)].map(String);

  /**
   * Reads balances without writing: one read-only script, or with `clustered` one per hash tag
   * (a script may touch one slot only), sent together; resolves to them and, for each, the
   * server's time it was read at. With `settle`, a tag's failure (or, past `deadline`, its
   * silence) is its balances' `failed` (the first failure is `failure`), not a rejection.
   */
  const read = async (counters: readonly CreditCounter[], settle = false, deadline?: number) => {
    const balances: (CounterResult | null)[] = new Array(counters.length);
    const at: number[] = new Array(counters.length);
    const failed: number[] = [];
    let failure: unknown;
    const groups = new Map<string, number[]>();
    counters.forEach((c, i) => {
      const tag = clustered ? c.slot ?? c.subject : "";
      const group = groups.get(tag);
      if (group === undefined) groups.set(tag, [i]);
      else group.push(i);
    });
    const readGroup = async (group: number[]) => {
      const reply = numbers(
        await run(
          READ_SCRIPT,
          wordsOf(
            group.map((i) => creditKey(counters[i])),
            group.flatMap((i) => refillParams(counters[i].refill).map(String)),
          ),
        ),
        (r) => r.length === group.length * 3 + 1,
      );
      group.forEach((i, j) => {
        balances[i] = reply[3 * j] === 1
          ? { allowed: true, remaining: reply[3 * j + 1], resetMs: reply[3 * j + 2] }
          : null;
        at[i] = reply[reply.length - 1];
      });
    };
    if (!settle) {
      await Promise.all([...groups.values()].map(readGroup));
      return { balances, at, failed, failure };
    }
    // A tag whose node does not answer by the deadline fails alone (its read writes nothing).
    let timer: ReturnType<typeof setTimeout> | undefined;
    const silent = deadline === undefined || groups.size < 2
      ? undefined
      : new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error("the Redis Cluster node of a hash tag did not answer in time")),
          Math.max(0, deadline - Date.now()),
        );
      });
    silent?.catch(() => {});
    try {
      await Promise.all([...groups.values()].map(async (group) => {
        try {
          await (silent === undefined
            ? readGroup(group)
            : Promise.race([readGroup(group), silent]));
        } catch (error) {
          if (error instanceof TypeError) throw error; // a bug: the whole drain fails
          failure ??= error;
          failed.push(...group);
        }
      }));
    } finally {
      clearTimeout(timer);
    }
    return { balances, at, failed, failure };
  };

  /**
   * Each check's answers from the script's reply (windows first, put back in order): a window
   * counter's as a policy result (`name`, `limit`, `windowMs` too: the limiter hands it on).
   */
  const answersOf = (
    checks: readonly StoreCheck[],
    split: (ReturnType<typeof byKind> | undefined)[] | undefined,
    answer: unknown,
  ): StoreBatchAnswer => {
    const reply = numbers(answer);
    let i = 0;
    const results: (CounterResult[] | null)[] = new Array(checks.length);
    for (let q = 0; q < checks.length; q++) {
      if (reply[i++] !== 1) {
        results[q] = null;
        continue;
      }
      const kinds = split?.[q];
      const counters = checks[q].counters;
      const windows = kinds === undefined ? counters as readonly WindowCounter[] : kinds.windows;
      const n = counters.length;
      const answers: CounterResult[] = new Array(n);
      let allowed = true;
      for (let c = 0; c < n; c++, i += 3) {
        const yes = reply[i] === 1;
        if (!yes) allowed = false;
        if (c >= windows.length) {
          answers[c] = { allowed: yes, remaining: reply[i + 1], resetMs: reply[i + 2] };
          continue;
        }
        const { name, limit, windowMs } = windows[c];
        // The limiter's policy result, in its order of fields (one shape).
        answers[c] = {
          name,
          limit,
          windowMs,
          remaining: reply[i + 1],
          resetMs: reply[i + 2],
          allowed: yes,
        } as CounterResult;
      }
      if (kinds === undefined) {
        results[q] = answers;
        continue;
      }
      if (allowed) { for (const c of kinds.credits) if (c.cost > 0) changed.set(creditKey(c), c); }
      results[q] = kinds.inOrder(answers);
    }
    if (i !== reply.length - 1) {
      throw new TypeError("the Redis script answered an unexpected reply");
    }
    return { results };
  };

  /**
   * One `EVALSHA` for the batch, its words built in one list (every key, then the inputs); a
   * check of window counters only is sent without a split, and one check of one window counter
   * (most checks) in four words (its deadline, limit, window and cost).
   */
  const checkBatch = (checks: readonly StoreCheck[]): Promise<StoreBatchAnswer> => {
    if (checks.length === 0) return Promise.resolve({ results: [] });
    if (!clock.known) return knowClock().then(() => checkBatch(checks));
    const sentAt = clock.now();
    let split: (ReturnType<typeof byKind> | undefined)[] | undefined;
    const read = (reply: unknown) => answersOf(checks, split, observed(reply, sentAt));
    const { counters, deadline } = checks[0];
    const w = checks.length === 1 && counters.length === 1 ? counters[0] : undefined;
    if (w?.kind === "window") {
      const at = onServer(deadline, sentAt);
      const words = ["", "", "1", windowKey(w), at, `${w.limit}`, `${w.windowMs}`, `${w.cost}`];
      return run(CHECK_SCRIPT, words, sentAt, read);
    }
    // The verb and script (set when sent), the number of keys (one per counter), the keys.
    const words = ["", "", ""];
    for (let q = 0; q < checks.length; q++) {
      const counters = checks[q].counters;
      let windowsOnly = true;
      for (let c = 0; c < counters.length; c++) {
        if (counters[c].kind !== "window") windowsOnly = false;
      }
      const kinds = windowsOnly ? undefined : byKind(counters);
      const windows = kinds === undefined ? counters as readonly WindowCounter[] : kinds.windows;
      for (let c = 0; c < windows.length; c++) words.push(windowKey(windows[c]));
      if (kinds === undefined) continue;
      (split ??= new Array(checks.length))[q] = kinds;
      for (const c of kinds.credits) words.push(creditKey(c));
    }
    words[2] = String(words.length - 3);
    words.push(String(checks.length));
    for (let q = 0; q < checks.length; q++) {
      const { counters, deadline } = checks[q];
      const kinds = split?.[q];
      const windows = kinds === undefined ? counters as readonly WindowCounter[] : kinds.windows;
      const credits = kinds === undefined ? 0 : kinds.credits.length;
      words.push(onServer(deadline, sentAt), String(windows.length), String(credits));
      for (let c = 0; c < windows.length; c++) {
        const w = windows[c];
        words.push(String(w.limit), String(w.windowMs), String(w.cost));
      }
      if (kinds === undefined) continue;
      for (const c of kinds.credits) words.push(String(c.cost), ...creditArgs(c));
    }
    return run(CHECK_SCRIPT, words, sentAt, read);
  };

  answersWellFormed(checkBatch); // the limiter does not check its answers again
  return {
    name: "redis",
    clustered,
    checkBatch,
    anchorsCredits: true,
    async changeCredits(counter, change, deadline) {
      const valid = compileCreditChange(change);
      const [how, n] = "set" in valid
        ? ["set", valid.set]
        : "add" in valid
        ? ["add", valid.add]
        : ["keep", 0];
      const anchor = "anchor" in valid;
      const key = creditKey(counter);
      await knowClock();
      const sentAt = clock.now();
      // Noted as the reply is read (as a spend's is), so in the order Redis applied them.
      const applied = (answer: unknown) => {
        const reply = numbers(observed(answer, sentAt), (r) => r.length === 5);
        if (reply[0] !== 1) return null;
        // An anchored balance (kept or set): its rule is changing, and a drain would read it under
        // the old one given here (and count its refills). Its caller writes back the balance
        // answered, with the new rule; a later spend, under that rule, marks it changed again.
        if (anchor) changed.delete(key);
        else changed.set(key, counter);
        changes++;
        if (draining > 0) changedSince.set(key, changes);
        return { allowed: true, remaining: reply[1], resetMs: reply[2], before: reply[3] };
      };
      return await run(
        CHANGE_SCRIPT,
        wordsOf([key], [
          onServer(deadline, sentAt),
          ...creditArgs(counter),
          how,
          String(n),
          anchor ? "1" : "0",
        ]),
        sentAt,
        applied,
      );
    },
    readCredits: async (counters) => (await read(counters)).balances,
    async drainCreditChanges(deadline?: number) {
      const drained = [...changed];
      changed.clear();
      const began = changes;
      draining++;
      /** Whether the balance of `key` was changed since this drain began. */
      const superseded = (key: string) => (changedSince.get(key) ?? -1) > began;
      /**
       * Keeps the drained balances at `indexes` for the next drain: one changed since this drain
       * began is not put back (it is drained as changed, or its change written back), nor is one
       * in place of a newer counter.
       */
      const keep = (indexes: Iterable<number>) => {
        for (const i of indexes) {
          const [key, counter] = drained[i];
          if (!changed.has(key) && !superseded(key)) changed.set(key, counter);
        }
      };
      try {
        let answer;
        try {
          answer = await read(drained.map(([, counter]) => counter), true, deadline);
        } catch (error) {
          keep(drained.keys());
          throw error;
        }
        const { balances, at, failed, failure } = answer;
        keep(failed);
        const lost = new Set(failed);
        const answered = drained.flatMap(([key, c], i) => {
          const balance = balances[i];
          return balance && !lost.has(i) && !superseded(key)
            ? [{ subject: c.subject, name: c.name, remaining: balance.remaining, at: at[i] }]
            : [];
        });
        if (failure === undefined) return answered;
        if (lost.size === drained.length) throw failure;
        const got = drained.length - lost.size;
        throw Object.assign(
          new Error(
            `the Redis store drained ${got} of ${drained.length} balances; ` +
              "the others' hash tags failed and are kept for the next drain",
            { cause: failure },
          ),
          { drained: answered },
        );
      } finally {
        if (--draining === 0) changedSince.clear();
      }
    },
    async ready() {
      const reply = await run(TIME_SCRIPT, wordsOf([], []));
      if (typeof reply !== "number" || !Number.isFinite(reply)) {
        throw new TypeError(
          "createRedisRateLimitStore: the client did not answer like a node-redis client " +
            "(pass `createClient(...)` of `redis`)",
        );
      }
      // Two more readings tighten the clock offset (a slow first reply makes every deadline early).
      for (let i = 0; i < 2; i++) await run(TIME_SCRIPT, wordsOf([], []));
      // The check script on one key under the prefix, its deadline passed (nothing read or
      // written): a user whose ACL lacks the prefix's keys is refused here (NOPERM), not at a check.
      const { results } = await checkBatch([{ counters: [PROBE], deadline: 0 }]);
      if (results[0] !== null) {
        throw new TypeError("the Redis store applied a check whose deadline had passed");
      }
    },
    close: stopReporting,
  };
}
