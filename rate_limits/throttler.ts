/**
 * `@nestjs/throttler` over a rate limiter, typed structurally (this file
 * imports nothing from Nest): a `ThrottlerStorage` that counts in the
 * limiter's store (every instance of a fleet shares one count) through the
 * limiter's door, so an outage is answered by its failure policy; and a
 * tracker by API key id.
 *
 * @module
 */
import { type CompiledRateLimitPolicy, compileRateLimitPolicies } from "./policy.ts";
import { assertCount, MAX_POLICY_LIMIT, subjectFault } from "./_checks.ts";
import { hasLoneSurrogate } from "../telemetry/_text.ts";
import type { RateLimitStore } from "./store.ts";
import { createRateLimiter, type RateLimiter } from "./limiter.ts";
import { assertKnownOptions } from "./_options.ts";
import { hexDigest } from "./_hex_digest.ts";
import { leavesAt } from "./_window.ts";

/** What `ThrottlerStorage.increment` returns (throttler 6; 4 and 5 read the first two). */
export interface ThrottlerStorageRecord {
  /** Hits counted in the window (limit + 1 when this one was refused). */
  totalHits: number;
  /** Seconds until the window's oldest counted hit expires. */
  timeToExpire: number;
  /** Whether this hit is refused. */
  isBlocked: boolean;
  /** Seconds until a refused tracker may try again (0 when not blocked). */
  timeToBlockExpire: number;
}

/**
 * `@nestjs/throttler`'s `ThrottlerStorage`: 6 calls
 * `increment(key, ttlMs, limit, blockDurationMs, throttlerName)`; 5 calls
 * `increment(key, ttlMs)` and 4 `increment(key, ttlSeconds)`, and both compare
 * the hits with their limit themselves.
 */
export interface ThrottlerStorageLike {
  /** Counts one hit of `key`. */
  increment(
    key: string,
    ttl: number,
    limit?: number,
    blockDuration?: number,
    throttlerName?: string,
  ): Promise<ThrottlerStorageRecord>;
}

/** A throttler as `ThrottlerModule.forRoot` takes it (values may be functions). */
export interface ThrottlerConfig {
  /** Throttler name (default `default`). */
  readonly name?: string;
  /** Window in ms, in s on throttler 4 (a function is checked at its first hit). */
  readonly ttl: number | ((...args: never[]) => unknown);
  /** Hits per window, at least 1 (a function is checked at its first hit). */
  readonly limit: number | ((...args: never[]) => unknown);
  /** Block after a refusal, in ms. */
  readonly blockDuration?: number | ((...args: never[]) => unknown);
}

/** Options of `createThrottlerStorage` (an unknown option is a `TypeError`). */
export interface ThrottlerStorageOptions {
  /**
   * The app's throttlers (pass the list given to `ThrottlerModule.forRoot`):
   * checked and compiled here, at start-up, so a `limit` of 0 or a bad `ttl`
   * fails the boot instead of the first request.
   */
  readonly throttlers?: readonly ThrottlerConfig[];
  /** `true` accepts a `ttl` under 1,000 ms (throttler 5 and 6 take ms; `ttl: 60` is seconds meant). */
  readonly subSecond?: boolean;
  /**
   * The installed `@nestjs/throttler` major, needed for 4 and 5: both call
   * `increment(key, ttl)`, 4 with seconds and 5 with ms, so the call cannot
   * tell them apart. Without it, such a call is a `TypeError`.
   */
  readonly throttlerMajor?: 4 | 5 | 6;
}

/** The end of a block's policy name (never of a throttler's: see `policyName`). */
const BLOCK = ".block";

/**
 * The policy name for a throttler name: lowercased, other characters as `_`,
 * at most 58; a name changed on the way, or ending `.block` (a block's policy
 * is its throttler's name and `.block`), ends with a hash of the name given, so
 * two throttlers never share a counter ("Burst" and "burst"; "login.block" and
 * the block of "login").
 */
function policyName(throttlerName: string): string {
  const safe = throttlerName.toLowerCase().replace(/[^a-z0-9_\-.*]/g, "_");
  const name = /^[a-z*]/.test(safe) ? safe : `t.${safe}`;
  if (name === throttlerName && name.length <= 58 && !name.endsWith(BLOCK)) return name;
  // FNV-1a over the UTF-16 code units: names are the app's own, not an attacker's.
  let hash = 0x811c9dc5;
  for (let i = 0; i < throttlerName.length; i++) {
    hash = Math.imul(hash ^ throttlerName.charCodeAt(i), 0x01000193);
  }
  return `${name.slice(0, 49)}.${(hash >>> 0).toString(16).padStart(8, "0")}`;
}

/**
 * The namespace of every throttler counter subject: a throttler's hits never
 * count on another check's counter of the same policy name and window (an API
 * key's own limits count under `key:<id>`, which `ApiKeysThrottlerTracker`
 * also answers as the tracker).
 */
const SUBJECT_PREFIX = "throttler:";

/**
 * The counter subject of a throttler key whose `throttler:<key>` cannot be one
 * (past `MAX_SUBJECT_LENGTH`, or holding a control character, a brace or a
 * lone surrogate): `throttler:#` and its SHA-256 (64 hex digits), so that keys
 * alike in their first characters count apart, and a key of a `generateKey`
 * of the app's own counts. A key with a lone surrogate, which UTF-8 would make
 * U+FFFD, is hashed as its JSON text (`\udXXX`), `#j` first.
 */
const hashedSubject = async (key: string) =>
  hasLoneSurrogate(key)
    ? `${SUBJECT_PREFIX}#j${await hexDigest("SHA-256", JSON.stringify(key))}`
    : `${SUBJECT_PREFIX}#${await hexDigest("SHA-256", key)}`;

const seconds = (ms: number) => Math.max(0, Math.ceil(ms / 1000));

/** A throttler's compiled policies: the hit (with its block, when it blocks) and the block's start. */
interface Compiled {
  readonly hit: readonly CompiledRateLimitPolicy[];
  readonly start?: readonly CompiledRateLimitPolicy[];
  readonly limit: number;
  readonly windowMs: number;
  readonly blockDuration: number | undefined;
}

/** Most throttler shapes kept compiled (a dynamic limit or ttl makes new ones). */
const MAX_COMPILED = 1_024;

/**
 * A `ThrottlerStorage` over `limiter` (a store is wrapped in
 * `createRateLimiter({ store })`: `onStoreError` "open", `timeoutMs` 1,000):
 * a throttler's hits are a window of `ttl` in the store (never above `limit`,
 * across instances on PostgreSQL or Redis), one limiter check per hit, through
 * its door, counted under `throttler:<key>` (never an API key's counter). A
 * refused hit is not counted. With a `blockDuration` longer than `ttl`, a
 * refusal also blocks the tracker for `blockDuration` (a second check, on
 * refusals only); hits during a block are refused, not counted (as throttler's
 * own storage). When the store does not answer: `open` passes the hit,
 * `closed` blocks it for 1 s, `local` counts it per instance (no blocks);
 * never a 500. Each throttler's policies are
 * compiled once. Throws a `TypeError` for a bad throttler in `throttlers` or
 * `throttlerMajor` (at start-up) or at a hit (`limit` 0, a sub-second `ttl`
 * without `subSecond`; throttler 4 or 5's `increment(key, ttl)` without their
 * `throttlerMajor`, or 6's five arguments with `throttlerMajor` 4 or 5).
 *
 * @example
 * ```ts
 * import { createRateLimiter } from "./limiter.ts";
 * import { createThrottlerStorage } from "./throttler.ts";
 * const throttlers = [{ name: "default", ttl: 60_000, limit: 10 }];
 * const storage = createThrottlerStorage(createRateLimiter(), { throttlers });
 * // ThrottlerModule.forRoot({ throttlers, storage })
 * const record = await storage.increment("tracker", 60_000, 10, 60_000, "default");
 * record.totalHits; // 1
 * ```
 */
export function createThrottlerStorage(
  limiter: RateLimiter | RateLimitStore,
  options: ThrottlerStorageOptions = {},
): ThrottlerStorageLike {
  assertKnownOptions(
    options,
    ["throttlers", "subSecond", "throttlerMajor"],
    "createThrottlerStorage",
  );
  const major = options.throttlerMajor;
  if (major !== undefined && major !== 4 && major !== 5 && major !== 6) {
    throw new TypeError(
      `createThrottlerStorage: throttlerMajor must be 4, 5 or 6 (got ${
        typeof major === "string" ? JSON.stringify(major) : String(major)
      })`,
    );
  }
  const given = limiter as Partial<RateLimiter & RateLimitStore> | null;
  const door: RateLimiter = typeof given?.check === "function" &&
      typeof given.onStoreError === "string"
    ? limiter as RateLimiter
    : typeof given?.checkBatch === "function"
    ? createRateLimiter({ store: limiter as RateLimitStore })
    : (() => {
      throw new TypeError(
        "createThrottlerStorage takes a rate limiter or a store (see createRateLimiter)",
      );
    })();
  const subSecond = options.subSecond === true;
  /** Compiled throttlers by name (the name string Nest passes on every hit: its hash is kept). */
  const cache = new Map<string, Compiled[]>();
  let cached = 0;

  /** The compiled policies of a throttler; a `TypeError` names the throttler and the field. */
  const compiled = (
    throttlerName: string,
    limit: number,
    windowMs: number,
    blockDuration: number | undefined,
    label = `throttler "${throttlerName}"`,
  ): Compiled => {
    const known = cache.get(throttlerName);
    if (known !== undefined) {
      for (const c of known) {
        if (c.limit === limit && c.windowMs === windowMs && c.blockDuration === blockDuration) {
          return c;
        }
      }
    }
    assertCount(limit, 1, `${label}: limit`);
    assertCount(windowMs, 1, `${label}: ttl`);
    if (windowMs < 1_000 && !subSecond) {
      throw new TypeError(
        major === 4
          ? `${label}: ttl ${windowMs} is under 1000 ms; give createThrottlerStorage's ` +
            "subSecond: true to mean it"
          : `${label}: ttl ${windowMs} is under 1000 ms (throttler 5 and 6 take ms: seconds ` +
            "given?); give createThrottlerStorage's subSecond: true to mean it (or " +
            "throttlerMajor: 4, whose ttl is in seconds)",
      );
    }
    const name = policyName(throttlerName);
    const hit = { name, limit, windowMs, subSecond };
    const blocks = blockDuration !== undefined && blockDuration > windowMs;
    // A block is 2 units in its window, which a hit's check (limit 1, cost 0) finds over its
    // limit: the whole check is refused, the hit not counted, until the block's units leave.
    const block = {
      name: `${name}${BLOCK}`,
      limit: 1,
      windowMs: blockDuration!,
      cost: 0,
      subSecond,
    };
    const entry: Compiled = blocks
      ? {
        hit: compileRateLimitPolicies([hit, block]),
        start: compileRateLimitPolicies([{ ...block, limit: 2, cost: 2 }]),
        limit,
        windowMs,
        blockDuration,
      }
      : { hit: compileRateLimitPolicies([hit]), limit, windowMs, blockDuration };
    if (cached >= MAX_COMPILED) {
      cache.clear();
      cached = 0;
    }
    const list = cache.get(throttlerName);
    if (list === undefined) cache.set(throttlerName, [entry]);
    else list.push(entry);
    cached++;
    return entry;
  };

  /** Throttler 4 or 5's hit: every hit counted (they compare the limit), `ttl` in s on 4. */
  const legacyHit = (throttlerName: string, ttl: number, label?: string) =>
    compiled(
      throttlerName,
      MAX_POLICY_LIMIT,
      major === 4 ? ttl * 1000 : ttl,
      undefined,
      label,
    );

  for (const t of options.throttlers ?? []) {
    const { ttl, limit, blockDuration } = t;
    const name = t.name ?? "default";
    if (typeof ttl === "function" || typeof limit === "function") continue;
    if (major === 4 || major === 5) { // their increment(key, ttl) names no throttler: "default"
      assertCount(limit, 1, `throttler "${name}": limit`);
      legacyHit("default", ttl, `throttler "${name}"`);
    } else {
      compiled(name, limit, ttl, typeof blockDuration === "number" ? blockDuration : undefined);
    }
  }

  return {
    async increment(key, ttl, limit, blockDuration, throttlerName = "default") {
      const legacy = limit === undefined; // throttler 4 or 5: no limit, every hit counted
      if (legacy !== (major === 4 || major === 5)) {
        const given = major === undefined ? "not given" : `throttlerMajor is ${major}`;
        throw new TypeError(
          legacy
            ? "createThrottlerStorage: increment(key, ttl) is @nestjs/throttler 4 (ttl in s) " +
              `or 5 (ms): give throttlerMajor: 4 or 5 (${given})`
            : "createThrottlerStorage: increment(key, ttl, limit, ...) is @nestjs/throttler 6, " +
              `but ${given}: give 6, or leave it out`,
        );
      }
      const policies = legacy
        ? legacyHit(throttlerName, ttl)
        : compiled(throttlerName, limit, ttl, blockDuration);
      // A key that is no string at all is the limiter's TypeError.
      const subject = typeof key !== "string"
        ? key
        : subjectFault(SUBJECT_PREFIX + key) === undefined
        ? SUBJECT_PREFIX + key
        : await hashedSubject(key);
      const result = await door.check(subject, policies.hit);
      const max = policies.limit;
      // Throttler 4 and 5 send timeToExpire as Retry-After and count the retry too: only once
      // every hit counted so far has left is it sure to pass, so theirs is the longest a hit stays
      // counted (docs/rate-limits.md, "The algorithm": a hit of sub-bucket 0 leaves last).
      const legacyExpire = legacy ? seconds(leavesAt(0, policies.windowMs)) : undefined;
      if (result.outcome === "open" || result.outcome === "closed") {
        const open = result.outcome === "open";
        return {
          // Throttler 4 and 5 compare hits > their limit, which may be any safe integer: above all.
          totalHits: open ? 0 : legacy ? Number.MAX_SAFE_INTEGER + 1 : max + 1,
          timeToExpire: legacyExpire ?? (open ? seconds(policies.windowMs) : 1),
          isBlocked: !open,
          timeToBlockExpire: open ? 0 : 1,
        };
      }
      const [counted, blocked] = result.policies;
      const timeToExpire = legacyExpire ?? seconds(counted.resetMs);
      if (blocked !== undefined && blocked.remaining < blocked.limit) {
        return {
          totalHits: counted.limit + 1,
          timeToExpire,
          isBlocked: true,
          // The block's end, or later the hits' room (a hit counts up to a sub-bucket past ttl).
          timeToBlockExpire: seconds(
            Math.max(blocked.resetMs, counted.allowed ? 0 : counted.resetMs),
          ),
        };
      }
      if (counted.allowed) {
        return {
          totalHits: counted.limit - counted.remaining,
          timeToExpire,
          isBlocked: false,
          timeToBlockExpire: 0,
        };
      }
      let wait = counted.resetMs;
      // Under `local` (the store failed) no block is kept: its start is not sent to that store.
      if (policies.start !== undefined && result.outcome === "store") {
        const started = await door.check(subject, policies.start);
        const [start] = started.policies;
        // When the block's units leave, and the hits' window has room by then too.
        wait = start === undefined ? wait : Math.max(start.resetMs, counted.resetMs);
      }
      return {
        totalHits: counted.limit + 1,
        timeToExpire,
        isBlocked: true,
        timeToBlockExpire: seconds(wait),
      };
    },
  };
}

/**
 * A throttler tracker: `key:<id>` for a request the API-key guard verified
 * (`request.apiKey.keyId`), else `ip:<client IP>` (`request.ip`, the text as
 * is). Synchronous, so it serves the `getTracker` option (throttler 5.1 and
 * later) and the guard's `getTracker(req)` override (4.x, which does not
 * await, and 5.0). Its limits: it sees no key under a custom context writer,
 * `request.ip` is the proxy's when framework proxy trust is off (every client
 * then shares one count), and IPv6 addresses are not grouped by network (a
 * client rotating within its /64 is never limited). `ApiKeysThrottlerTracker`
 * (`./api-keys/nest`) has none of them.
 *
 * @example
 * ```ts
 * import { apiKeyThrottlerTracker } from "./throttler.ts";
 * // ThrottlerModule.forRoot({ throttlers: [...], getTracker: apiKeyThrottlerTracker })
 * apiKeyThrottlerTracker({ apiKey: { keyId: "0190" } }); // "key:0190"
 * ```
 */
export function apiKeyThrottlerTracker(request: Record<string, unknown>): string {
  const context = request.apiKey as { keyId?: unknown } | undefined;
  if (typeof context?.keyId === "string" && context.keyId !== "") return `key:${context.keyId}`;
  const socket = request.socket as { remoteAddress?: unknown } | undefined;
  const ip = typeof request.ip === "string" ? request.ip : socket?.remoteAddress;
  return `ip:${typeof ip === "string" ? ip : "unknown"}`;
}
