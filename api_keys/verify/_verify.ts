/**
 * The verify flow of `ApiKeysService` (`verify`, `authorize`,
 * `authorizeRequest`): header rules → parse → cache → lookup → secret → state
 * → IP allowlist / environment / scope → metric, events, `lastUsedAt` (an
 * authorization writes it only once every check passed). Until the secret is
 * proven, every failure does the same work in the same order.
 *
 * @module
 */
import { ApiKeyError, apiKeyError, type ApiKeyErrorCode } from "../errors.ts";
import type {
  ApiKeyAuthorizationMetric,
  ApiKeyAuthorizationOutcome,
  ApiKeyVerificationMetric,
} from "../events.ts";
import { type ApiKeyHeaderReader, extractApiKeyWith } from "../extract_api_key.ts";
import { isIpAllowed } from "../ip_allowlist.ts";
import { API_KEY_SECRET_LENGTH, type LayoutParsedKey } from "../key_format.ts";
import { acceptedUntilMs } from "../_accepted_until.ts";
import { constantTimeEqual } from "./_cache.ts";
import { FirstUseWatch } from "./_first_use.ts";
import { CURRENT_HASH_SCHEME } from "../hasher.ts";
import { isRetired } from "./_legacy.ts";
import { assertScopeLevel, scopeSatisfies } from "../scopes.ts";
import type { Settings } from "../_settings.ts";
import { assertChargedRoute, emptiedBalances, storedRateLimits } from "../metering/_limits.ts";
import { assertCost } from "../metering/_count.ts";
import { assertKnownFields } from "../../telemetry/_known_fields.ts";
import { errorNameOf } from "../../telemetry/_error_name.ts";
import type { Settled } from "../../telemetry/_taps.ts";
import type {
  ApiKeyContext,
  ApiKeyRecord,
  ApiKeyVerificationOutcome,
  AuthorizeOptions,
  Environment,
} from "../types.ts";
import type { ApiKeyUsageRefusalCode } from "../metering/usage.ts";
import type { CountedRow } from "../metering/_usage.ts";

/** What is known of the key at a failure (only after the secret matched). */
interface KnownKey {
  keyId: string;
  tenantId: string;
  environment: Environment;
}

/**
 * What a verify records of itself: `"use"` a client's use (the metric, failure reports,
 * `lastUsedAt`, a rotation's first use, a hash upgrade, the cache fill); `"use+event"` that and
 * `api_key.used`; `"check"` a use whose request `authorize` then checks (it writes
 * `lastUsedAt` and counts the usage outcome); `"nothing"` for a leak report (the same
 * verification work, no trace of a use).
 */
type Recording = "use" | "use+event" | "check" | "nothing";

/** The options of a call that gives none (not one object per call). */
const NO_OPTIONS: AuthorizeOptions = Object.freeze({});

/** Most keys whose last `lastUsedAt` write is remembered for the debounce. */
const MAX_DEBOUNCE_ENTRIES = 100_000;

/**
 * Stands in for the cached secret when there is none: `length` characters (as long as the
 * presented secret, so the comparison runs to its end), never equal to a secret (`#` is in no
 * alphabet). Made in one piece by `String.fromCharCode`, so it is a flat string like the secrets
 * it is compared with.
 */
function noSecret(length: number): string {
  return String.fromCharCode(...new Array<number>(length).fill(0x23));
}

function freezeContext(record: Readonly<ApiKeyRecord>): ApiKeyContext {
  const context: ApiKeyContext = {
    keyId: record.id,
    tenantId: record.tenantId,
    environment: record.environment,
    scopes: Object.freeze([...record.scopes]) as string[],
    prefix: record.prefix,
  };
  if (record.allowedIpCidrs !== undefined && record.allowedIpCidrs.length > 0) {
    context.allowedIpCidrs = Object.freeze([...record.allowedIpCidrs]) as string[];
  }
  if (record.rateLimits !== undefined) context.rateLimits = storedRateLimits(record.rateLimits);
  if (record.rateLimitKeyId !== undefined) context.rateLimitKeyId = record.rateLimitKeyId;
  if (record.credits !== undefined) context.credits = Object.freeze({ ...record.credits });
  return Object.freeze(context);
}

/**
 * A clock answering wall-clock ms `at` (apart from its caller, so a debounced
 * touch allocates no closure context).
 */
function clockAt(at: number): () => Date {
  return () => new Date(at);
}

/** The `Date` of wall-clock ms `at`, else `clock()` read now. */
function dateOf(at: number | undefined, clock: () => Date): Date {
  return at === undefined ? clock() : new Date(at);
}

function knownOf(context: ApiKeyContext): KnownKey {
  return { keyId: context.keyId, tenantId: context.tenantId, environment: context.environment };
}

/**
 * The code of the first request-level check of `options` that a verified
 * `context` fails (IP allowlist, then environment, then scope), if any.
 */
export function authorizationFailure(
  context: ApiKeyContext,
  options: AuthorizeOptions,
): ApiKeyErrorCode | undefined {
  const { requiredEnvironment, requiredScope } = options;
  if (!isIpAllowed(options.clientIp, context.allowedIpCidrs)) {
    return "api_key_ip_not_allowed";
  }
  if (requiredEnvironment !== undefined && context.environment !== requiredEnvironment) {
    return "api_key_environment_mismatch";
  }
  if (
    requiredScope !== undefined &&
    !scopeSatisfies(context.scopes, requiredScope.resource, requiredScope.level)
  ) {
    return "api_key_scope_insufficient";
  }
  return undefined;
}

/** The `api_key.authorization` outcome of each refusal after a proven secret (others: `error`). */
const AUTHORIZATION_OUTCOMES: Readonly<Partial<Record<string, ApiKeyAuthorizationOutcome>>> = Object
  .freeze({
    api_key_ip_not_allowed: "ip_denied",
    api_key_environment_mismatch: "environment_denied",
    api_key_scope_insufficient: "scope_denied",
    api_key_rate_limited: "rate_limited",
    api_key_usage_exceeded: "usage_exceeded",
  });

/** Every key of `AuthorizeOptions` (another is refused: a misspelt `requiredScope` leaves a route open). */
const AUTHORIZE_OPTIONS: readonly string[] = Object.keys(
  {
    clientIp: true,
    requiredEnvironment: true,
    requiredScope: true,
    cost: true,
    rateLimits: true,
    request: true,
  } satisfies Record<keyof AuthorizeOptions, true>,
);

/** Throws a `TypeError` for an unknown option, a bad `cost` or a `requiredScope` level other than read or write (a programmer error). */
function assertOptions(options: AuthorizeOptions): void {
  if (options === NO_OPTIONS) return;
  assertKnownFields(options, AUTHORIZE_OPTIONS, "AuthorizeOptions", "option");
  if (options.cost !== undefined) assertCost(options.cost, "AuthorizeOptions.cost");
  assertChargedRoute(options, "AuthorizeOptions");
  if (options.requiredScope !== undefined) {
    assertScopeLevel(options.requiredScope.level, "AuthorizeOptions.requiredScope.level");
  }
}

/** What a request's authorization is known by: the key it presented and the charge it asked. */
interface Charge {
  readonly rawKey: string;
  readonly cost: number | undefined;
  readonly rateLimits: AuthorizeOptions["rateLimits"];
}

/** A request's authorization that charged it, with the context it answered. */
interface ChargedRequest extends Charge {
  readonly context: ApiKeyContext;
  /**
   * Its accepted usage count (with `usage`): the row it is in and its time, for
   * `UsageRecorder.refusedInstead`; cleared when a later check refuses it (taken back once).
   */
  counted: { readonly row: CountedRow; readonly at: number } | undefined;
  readonly pending?: undefined;
}

/** A request's authorization still running: settles once `#charged` holds its outcome. */
interface PendingCharge extends Charge {
  readonly pending: Promise<ApiKeyContext>;
}

/**
 * Whether an authorization asks the charge `earlier` made: the same `cost` and the same
 * `rateLimits` (the same value, or lists of the same names or policy objects in order). No
 * `cost` and `cost: 1` differ: none counts each policy at its own cost, which may be more.
 */
function sameCharge(earlier: Charge, options: AuthorizeOptions): boolean {
  const [a, b] = [earlier.rateLimits, options.rateLimits];
  if (earlier.cost !== options.cost) return false;
  if (a === b) return true;
  if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
  return a.every((item, i) => item === b[i]);
}

/** A key the verification cache does not answer: parsed, with the change feed's freshness read at its start. */
class CacheMiss {
  /** The wall-clock ms the storage path read (a key with an expiry), for the request's other uses. */
  wallMs: number | undefined = undefined;
  constructor(readonly parsed: LayoutParsedKey, readonly fresh: boolean) {}
}

/** Verifies and authorizes keys with the compiled settings; the contexts it returns are frozen. */
export class VerifyFlow {
  readonly #s: Settings;
  /** Monotonic time of the last `lastUsedAt` write per key id (the debounce). */
  readonly #lastTouched = new Map<string, number>();
  readonly #retiredVersionsWarned = new Set<string>();
  /** Whether a key with limits or credits was refused for want of a limiter (warned once). */
  #noLimiterWarned = false;
  /** Rotations that wait for their new key's first use. */
  readonly #firstUse: FirstUseWatch;
  /** Contexts of records never used when read: their first authorized request is a first use. */
  readonly #unused = new WeakSet<ApiKeyContext>();
  /** Contexts added to `#unused` and not taken out by a use (0: an authorization looks none up). */
  #unusedAdded = 0;
  /** The wall-clock ms the last cache hit read (its expiry check), taken by the authorization it serves. */
  #hitWallMs: number | undefined;
  /** The time each refusal of an authorization's verification was counted at, for its `#denied`. */
  readonly #refusedAt = new WeakMap<ApiKeyError, number>();
  /** Stand-ins for the cached secret (see `noSecret`), by length: one per accepted layout's. */
  readonly #noSecrets: string[] = [];
  /**
   * Each authorized framework request (`AuthorizeOptions.request`): charged once (see
   * `#recheck`); one whose authorization is running, until it settles (see `#pending`).
   */
  readonly #charged = new WeakMap<object, ChargedRequest | PendingCharge>();

  /** A flow over `settings`. */
  constructor(settings: Settings) {
    this.#s = settings;
    this.#firstUse = new FirstUseWatch(settings);
    const lengths = settings.layouts.legacy.map((layout) => layout.secretLength);
    for (const length of [API_KEY_SECRET_LENGTH, ...lengths]) {
      this.#noSecrets[length] ??= noSecret(length);
    }
  }

  /** Resolves once the background work of first uses settled (see `FirstUseWatch.settled`). */
  settled(): Promise<void> {
    return this.#firstUse.settled();
  }

  /** See `ApiKeysService.verify`. */
  verify(rawKey: string): Promise<ApiKeyContext> {
    return this.#verify(rawKey, this.#s.emitUsageEvents ? "use+event" : "use");
  }

  /**
   * Verifies a reported (leaked) key with the work of `verify`, recording no
   * use: no metric, no `onAuthFailed` or `api_key.auth_failed`, no
   * `lastUsedAt`, no `api_key.used`, no first use of a rotation, no hash
   * upgrade, no cache fill. Resolves the context or rejects like `verify`.
   */
  verifyReported(rawKey: string): Promise<ApiKeyContext> {
    return this.#verify(rawKey, "nothing");
  }

  /** See `ApiKeysService.authorize`. */
  authorize(
    rawKey: string | undefined | null,
    options: AuthorizeOptions = NO_OPTIONS,
  ): Promise<ApiKeyContext> {
    try {
      assertOptions(options);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#authorize(rawKey, options);
  }

  /** See `ApiKeysService.authorizeRequest`. */
  authorizeRequest(
    readHeader: ApiKeyHeaderReader,
    options: AuthorizeOptions = NO_OPTIONS,
  ): Promise<ApiKeyContext> {
    let start = 0;
    let rawKey: string | undefined;
    try {
      // The one start of the request, its verification's too (a clock read is not free).
      start = this.#s.monotonic();
      assertOptions(options);
      rawKey = extractApiKeyWith(readHeader, this.#s.layouts);
    } catch (error) {
      // The header rules refused the request: reported like a key that does not parse.
      if (error instanceof ApiKeyError) {
        const at = this.#refusalAt(undefined, false);
        this.#report(start, "malformed", error.code, null, at);
        this.#denied(error.code, "credential_rejected", start, at);
      }
      return Promise.reject(error);
    }
    return this.#authorize(rawKey, options, start);
  }

  /**
   * `authorize` after its options are checked. A verification cache hit with
   * synchronous limits (an in-process store) settles without an `await`: its
   * checks run before this returns; the storage path awaits the lookup once.
   * Never throws: every failure (a sink's or a clock's too) is a rejection.
   */
  #authorize(
    rawKey: string | undefined | null,
    options: AuthorizeOptions,
    start?: number,
  ): Promise<ApiKeyContext> {
    try {
      const answer = this.#authorizeNow(rawKey, options, start);
      return answer instanceof Promise ? answer : Promise.resolve(answer);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * `#authorize`: the authorized context, or a promise of it off the synchronous path; throws a
   * refusal. `begun`: the monotonic time the request began (`authorizeRequest`'s), else read here.
   */
  #authorizeNow(
    rawKey: string | undefined | null,
    options: AuthorizeOptions,
    begun: number | undefined,
  ): ApiKeyContext | Promise<ApiKeyContext> {
    const s = this.#s;
    // One read serves the authorization's start and its verification's.
    const timed = begun !== undefined ||
      s.emitAuthorizationMetric !== undefined || s.taps.authorization !== undefined;
    const start = begun ?? (timed ? s.monotonic() : 0);
    if (rawKey === undefined || rawKey === null || rawKey === "") {
      const at = this.#refusalAt(undefined, false);
      this.#authFailed(null, "api_key_missing", undefined, at);
      this.#denied("api_key_missing", "missing", start, at);
      throw apiKeyError("api_key_missing");
    }
    const request = options.request;
    const charged = typeof request === "object" && request !== null ? request : undefined;
    if (charged !== undefined) {
      const earlier = this.#charged.get(charged);
      if (earlier?.rawKey === rawKey && sameCharge(earlier, options)) {
        if (earlier.pending === undefined) return this.#recheck(earlier, options, start);
        // Once the running one settled: charged (rechecked), else this one is charged on its own.
        const again = () => this.#authorizeNow(rawKey, options, timed ? start : undefined);
        return earlier.pending.then(again, again);
      }
    }
    // The raw key of a request to record as charged once authorized (`#authorized`).
    const chargedKey = charged === undefined ? undefined : rawKey;
    const verifyStart = timed ? start : s.monotonic();
    let answer: ApiKeyContext | CacheMiss;
    try {
      answer = this.#verifyCached(rawKey, "check", verifyStart);
    } catch (error) {
      throw this.#credentialRejected(error, start);
    }
    let checked: ApiKeyContext | Promise<ApiKeyContext>;
    if (answer instanceof CacheMiss) {
      checked = this.#authorizeStored(answer, options, start, verifyStart, chargedKey);
    } else {
      // Set by the hit just answered (no call in between): the request's wall-clock time, if read.
      const read = this.#hitWallMs;
      this.#hitWallMs = undefined;
      checked = this.#checked(answer, options, start, verifyStart, read, chargedKey);
    }
    return chargedKey === undefined || !(checked instanceof Promise)
      ? checked
      : this.#pending(charged!, chargedKey, options, checked);
  }

  /**
   * Records the running authorization `answer` of `request` (with `rawKey` and `options`' charge):
   * a matching one meanwhile waits for it (`#authorizeNow`). Refused or failed, it is taken out
   * and the request's earlier charge, if any, is back: the next is charged on its own or as that
   * one. Charged, `#authorized` has replaced it.
   */
  #pending(
    request: object,
    rawKey: string,
    options: AuthorizeOptions,
    answer: Promise<ApiKeyContext>,
  ): Promise<ApiKeyContext> {
    const earlier = this.#charged.get(request);
    const entry: PendingCharge = {
      rawKey,
      cost: options.cost,
      rateLimits: options.rateLimits,
      pending: answer.catch((error) => {
        if (this.#charged.get(request) !== entry) throw error;
        if (earlier !== undefined && earlier.pending === undefined) {
          this.#charged.set(request, earlier);
        } else this.#charged.delete(request);
        throw error;
      }),
    };
    this.#charged.set(request, entry);
    return entry.pending;
  }

  /**
   * A later authorization of a request this flow charged (`earlier`) with the same key and the
   * same charge (`sameCharge`): the first's context (its limits' answers, its charge), if it
   * passes this one's IP allowlist, environment and scope; nothing spent or recorded again. A
   * refusal is reported as usual, at the request's time, and is its one usage outcome: it takes
   * back the accepted count (`UsageRecorder.refusedInstead`); a further refusal counts nothing.
   * One asking another charge is charged on its own (never less than asked).
   */
  #recheck(earlier: ChargedRequest, options: AuthorizeOptions, start: number): ApiKeyContext {
    const code = authorizationFailure(earlier.context, options);
    if (code === undefined) return earlier.context;
    const error = this.#refuse(earlier.context, code, start, earlier.counted?.at, earlier);
    earlier.counted = undefined;
    throw error;
  }

  /** `#authorize` of a key the cache does not answer: its storage path, then the request's checks. */
  async #authorizeStored(
    miss: CacheMiss,
    options: AuthorizeOptions,
    start: number,
    verifyStart: number,
    chargedKey: string | undefined,
  ): Promise<ApiKeyContext> {
    let context: ApiKeyContext;
    try {
      context = await this.#verifyStored(miss, "check", verifyStart);
    } catch (error) {
      throw this.#credentialRejected(error, start);
    }
    return this.#checked(context, options, start, verifyStart, miss.wallMs, chargedKey);
  }

  /**
   * Counts a verification failure within an authorization begun at `start` (at
   * the time its refusal was counted at, if it was); returns `error`.
   */
  #credentialRejected(error: unknown, start: number): unknown {
    if (error instanceof ApiKeyError) {
      this.#denied(error.code, "credential_rejected", start, this.#refusedAt.get(error));
    } else this.#authorizationMetric(start, "error");
    return error;
  }

  /**
   * The request-level checks of a verified `context` (IP allowlist, environment,
   * scope, then limits and credits); the authorized context, a promise of it
   * when the limiter answers asynchronously. Throws (or rejects) the refusal; a
   * throw in the limit check is counted as an error and passed on, never passed open.
   * `verifiedAt` is the monotonic time its verification began; `read` the
   * wall-clock time it read, if it did (one read per request). With the default
   * clocks, that time, else its monotonic start's, is handed to the limiter too
   * (`settings.wallAt`). `chargedKey`: see `#authorized`.
   */
  #checked(
    context: ApiKeyContext,
    options: AuthorizeOptions,
    start: number,
    verifiedAt: number,
    read: number | undefined,
    chargedKey: string | undefined,
  ): ApiKeyContext | Promise<ApiKeyContext> {
    const nowMs = this.#s.wallAt?.(verifiedAt, read);
    const wallMs = nowMs ?? read;
    const code = authorizationFailure(context, options);
    if (code !== undefined) throw this.#refuse(context, code, start, wallMs);
    const limits = this.#s.limits;
    if (limits === undefined) {
      if (context.credits !== undefined || (context.rateLimits?.length ?? 0) > 0) {
        // Stored limits or credits are never served unmetered (a worker built without one).
        this.#warnNoLimiter();
        throw this.#limitFailed(
          context,
          apiKeyError("api_key_rate_limit_unavailable"),
          start,
          wallMs,
        );
      }
      return this.#authorized(context, context, options, start, verifiedAt, wallMs, chargedKey);
    }
    let applied: ApiKeyContext | Promise<ApiKeyContext>;
    try {
      applied = limits.apply(context, options, nowMs);
    } catch (error) {
      throw this.#limitFailed(context, error, start, wallMs);
    }
    if (!(applied instanceof Promise)) {
      return this.#authorized(context, applied, options, start, verifiedAt, wallMs, chargedKey);
    }
    return this.#checkedLater(applied, context, options, start, verifiedAt, wallMs, chargedKey);
  }

  /**
   * Reports the refusal `code` of a verified `context`'s request-level checks begun at `start`
   * (at `wallMs`, the request's time if it has one; `charged`: see `#refused`); returns the
   * error to throw.
   */
  #refuse(
    context: ApiKeyContext,
    code: ApiKeyErrorCode,
    start: number,
    wallMs: number | undefined,
    charged?: ChargedRequest,
  ): ApiKeyError {
    const at = this.#refusalAt(wallMs, true);
    this.#authFailed(context.prefix, code, knownOf(context), at);
    this.#refused(context, code, start, at, charged);
    return apiKeyError(code);
  }

  /**
   * `#checked` once the limiter answers asynchronously (apart, so the synchronous
   * path allocates no closure context for its arguments).
   */
  #checkedLater(
    applied: Promise<ApiKeyContext>,
    context: ApiKeyContext,
    options: AuthorizeOptions,
    start: number,
    verifiedAt: number,
    wallMs: number | undefined,
    chargedKey: string | undefined,
  ): Promise<ApiKeyContext> {
    return applied.then(
      (limited) =>
        this.#authorized(context, limited, options, start, verifiedAt, wallMs, chargedKey),
      (error) => {
        throw this.#limitFailed(context, error, start, wallMs);
      },
    );
  }

  /**
   * Counts a limit check's refusal (at `wallMs`, the request's wall-clock time if
   * it has one) or failure (a bug: `error`); returns `error`.
   */
  #limitFailed(
    context: ApiKeyContext,
    error: unknown,
    start: number,
    wallMs: number | undefined,
  ): unknown {
    if (error instanceof ApiKeyError) {
      this.#refused(context, error.code, start, this.#refusalAt(wallMs, true));
    } else this.#authorizationMetric(start, "error", context.environment, context.tenantId);
    return error;
  }

  /**
   * Records an authorized request of `context` (answered `limited`, with the
   * limits' answers): credit taps and events, a rotation's first use, usage or
   * `lastUsedAt` (debounced from `verifiedAt`), the metric and `api_key.used`,
   * all at the request's one time: `wallMs` (see `#checked`), else one clock
   * read when one of them takes the time; returns `limited`. With `chargedKey`, the raw key
   * presented, records `options.request` as charged (`#recheck`).
   */
  #authorized(
    context: ApiKeyContext,
    limited: ApiKeyContext,
    options: AuthorizeOptions,
    start: number,
    verifiedAt: number,
    wallMs: number | undefined,
    chargedKey: string | undefined,
  ): ApiKeyContext {
    const s = this.#s;
    const cost = options.cost ?? 1;
    // A first use once: the context stays cached after it.
    const first = this.#takeUnused(context);
    let at = wallMs;
    if (at === undefined && (first || s.usage !== undefined || s.emitUsageEvents)) {
      at = s.clock().getTime();
    }
    if (limited.creditResult !== undefined) {
      if (cost !== 0) {
        s.taps.credits?.(cost, emptiedBalances(limited), context.tenantId);
      }
      if (s.emitEvent !== undefined) {
        for (const event of s.limits!.creditEvents(limited, cost, at, s.clock)) s.emitEvent(event);
      }
    }
    if (first) this.#firstUse.seen(context.keyId, at!);
    let counted: ChargedRequest["counted"];
    if (s.usage !== undefined) {
      const { keyId, tenantId } = context;
      const row = s.usage.accepted(keyId, tenantId, cost, at!, chargedKey !== undefined);
      if (chargedKey !== undefined) counted = { row, at: at! };
    } else this.#touchLastUsed(context.keyId, verifiedAt, at);
    if (chargedKey !== undefined) {
      this.#charged.set(options.request as object, {
        rawKey: chargedKey,
        cost: options.cost,
        rateLimits: options.rateLimits,
        context: limited,
        counted,
      });
    }
    this.#authorizationMetric(start, "success", context.environment, context.tenantId);
    if (s.emitUsageEvents) this.#used(limited, at!);
    return limited;
  }

  /**
   * Counts a refusal of a proven key's authorization begun at `start` (usage,
   * `api_key.authorization`, `api_key.authorization_denied`) at `at`, the
   * request's one time (`#refusalAt`). Of a request already `charged`, the refusal replaces its
   * accepted usage count, if it still has one (`#recheck`): one usage outcome per request.
   */
  #refused(
    context: ApiKeyContext,
    code: ApiKeyErrorCode,
    start: number,
    at: number | undefined,
    charged?: ChargedRequest,
  ): void {
    const outcome = AUTHORIZATION_OUTCOMES[code];
    const usage = this.#s.usage;
    if (outcome !== undefined && usage !== undefined) {
      const refusal = code as ApiKeyUsageRefusalCode;
      if (charged === undefined) usage.refused(context.keyId, context.tenantId, refusal, at!);
      else if (charged.counted !== undefined) {
        usage.refusedInstead(charged.counted.row, refusal, charged.cost ?? 1, charged.counted.at);
      }
    }
    this.#denied(code, outcome ?? "error", start, at, context.environment, context.tenantId);
  }

  /**
   * The one wall-clock ms of a refused request, for its usage count (when
   * `counted`) and its events: `wallMs`, the time it has (see `#timeOf`), else
   * one clock read when one of them takes the time, else `undefined`.
   */
  #refusalAt(wallMs: number | undefined, counted: boolean): number | undefined {
    const s = this.#s;
    if (wallMs !== undefined) return wallMs;
    if (s.emitEvent === undefined && (!counted || s.usage === undefined)) return undefined;
    return s.clock().getTime();
  }

  /**
   * Reports a refused authorization: its metric and `api_key.authorization_denied`
   * at `at` (the request's wall-clock ms; one clock read when it has none).
   */
  #denied(
    code: ApiKeyErrorCode,
    outcome: ApiKeyAuthorizationOutcome,
    start: number,
    at: number | undefined,
    environment?: Environment,
    tenantId?: string,
  ): void {
    const s = this.#s;
    this.#authorizationMetric(start, outcome, environment, tenantId);
    s.emitEvent?.({ type: "api_key.authorization_denied", at: dateOf(at, s.clock), code });
  }

  /** Emits the one `api_key.authorization` metric of an authorization begun at `start`. */
  #authorizationMetric(
    start: number,
    outcome: ApiKeyAuthorizationOutcome,
    environment?: Environment,
    tenantId?: string,
  ): void {
    const emit = this.#s.emitAuthorizationMetric;
    const tap = this.#s.taps.authorization;
    if (emit === undefined && tap === undefined) return;
    const durationMs = this.#s.monotonic() - start;
    tap?.(outcome, environment, tenantId, durationMs);
    if (emit === undefined) return;
    const metric: ApiKeyAuthorizationMetric = {
      type: "api_key.authorization",
      outcome,
      durationMs,
    };
    if (environment !== undefined) metric.environment = environment;
    emit(metric);
  }

  /**
   * Verifies `rawKey` (see `ApiKeysService.verify`), recording what `recording`
   * says (authorization emits `api_key.used` after its own checks).
   */
  #verify(rawKey: string, recording: Recording): Promise<ApiKeyContext> {
    try {
      const start = this.#s.monotonic();
      const answer = this.#verifyCached(rawKey, recording, start);
      return answer instanceof CacheMiss
        ? this.#verifyStored(answer, recording, start)
        : Promise.resolve(answer);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * The synchronous start of `#verify` begun at `start`: parses `rawKey` and
   * answers a verification cache hit (its context, recorded); throws a
   * malformed key or a cached refusal; else a `CacheMiss`, for `#verifyStored`.
   */
  #verifyCached(
    rawKey: string,
    recording: Recording,
    start: number,
  ): ApiKeyContext | CacheMiss {
    const s = this.#s;
    const parsed = s.layouts.parse(rawKey, s.namespace);
    if (parsed === null) {
      throw this.#failure(recording, start, "malformed", "api_key_malformed", null, undefined);
    }
    const { prefix, secret, environment, layout } = parsed;
    // Until the secret is proven, every path does the same work in the same order: one cache
    // comparison, one storage lookup, one HMAC verification, the same awaits.
    // With a change feed, cached data (entries, the prefix set) is trusted only while it is fresh.
    const fresh = s.fleet?.fresh(start) ?? true;
    const cache = s.cache;
    if (cache !== undefined) {
      // Compared with a stand-in as long as the secret when nothing is cached: a cached prefix
      // costs a wrong secret what an unknown one does, in every layout. A hit is the very key
      // verified (same secret and environment); anything else is settled by the storage path.
      const entry = cache.get(prefix);
      const tap = s.taps.cache;
      if (
        constantTimeEqual(entry?.secret ?? this.#noSecrets[secret.length], secret) &&
        entry !== undefined &&
        entry.context.environment === environment && entry.layout === layout && fresh
      ) {
        if (entry.refused !== undefined && start < entry.cachedUntil) {
          cache.touch(prefix);
          tap?.("negative_hit");
          const { keyId, tenantId } = entry.context;
          throw this.#failure(
            recording,
            start,
            entry.refused,
            entry.refused === "revoked" ? "api_key_revoked" : "api_key_expired",
            prefix,
            environment,
            { keyId, tenantId, environment },
          );
        }
        // `start` is now; a key without expiry needs no wall-clock read (one that has one
        // serves the request's other uses of the time: usage, `api_key.used`).
        let wallMs: number | undefined;
        if (
          entry.refused === undefined &&
          start < entry.cachedUntil &&
          (entry.expiresAtMs === Infinity || (wallMs = s.clock().getTime()) < entry.expiresAtMs)
        ) {
          cache.touch(prefix);
          tap?.("hit");
          // A use answered from the cache may be a first one (a denied authorization cached it).
          const use = recording === "use" || recording === "use+event";
          const first = use && this.#takeUnused(entry.context);
          const context = this.#verified(recording, start, entry.context, wallMs, first);
          this.#hitWallMs = wallMs;
          return context;
        }
        cache.invalidate(prefix);
      }
      tap?.("miss");
    }
    return new CacheMiss(parsed, fresh);
  }

  /**
   * The storage path of `#verify` begun at `start` for a key the cache did not
   * answer: lookup, secret, state, then the cache fill.
   */
  async #verifyStored(
    miss: CacheMiss,
    recording: Recording,
    start: number,
  ): Promise<ApiKeyContext> {
    const s = this.#s;
    const { parsed, fresh } = miss;
    const { prefix, secret, environment, layout } = parsed;
    const cache = s.cache;
    // Read before the lookup: an invalidation from here on drops this verify's fill.
    const generation = cache?.generation ?? 0;
    let record: Readonly<ApiKeyRecord> | null;
    /** The lookup's span: only when the storage is read. */
    let traced: Settled | undefined;
    try {
      // A prefix the feed's set does not hold is unknown without a lookup (then the same HMAC
      // work). With the peekByPrefix capability: no deadline timer, no copy, no await.
      if (fresh && s.fleet?.absent(prefix)) record = null;
      else {
        traced = s.taps.span?.("api_key.storage.lookup");
        const peek = s.storage.peek;
        record = peek !== undefined ? peek(prefix) : await s.storage.findByPrefix(prefix);
      }
    } catch (error) {
      traced?.(errorNameOf(error));
      if (recording !== "nothing") this.#metric(start, "error", environment);
      throw error;
    }
    traced?.();
    // A hash retired by retiredPepperVersions reads as an unconfigured version's.
    const retired = record !== null &&
      isRetired(s.retiredPepperVersions, record.hashScheme, record.pepperVersion);
    // A legacy scheme's hash is usable only with legacyKeyLayouts (its keys' layouts): without
    // them its digests, which no other path makes then, would tell that the record exists.
    const unusable = retired || (record !== null && s.layouts.legacy.length === 0 &&
      (record.hashScheme ?? CURRENT_HASH_SCHEME) !== CURRENT_HASH_SCHEME);
    // An unknown prefix and a retired pepper cost the hasher what a stored key does.
    const matches =
      await (record === null || unusable
        ? s.hasher.dummyVerify(secret)
        : s.hasher.verify(secret, record.hash, record.pepperVersion, record.hashScheme));
    // With storesLayout, a key verifies only in its record's layout (absent: the current one):
    // refused after the same lookup and hash work, as a wrong secret is.
    if (record === null || !matches || (s.storage.storesLayout && record.layout !== layout)) {
      // A retired pepper is warned about; looked up for an unknown prefix too (version 0 is
      // never configured), so it costs what a stored key does.
      const version = record === null ? 0 : record.pepperVersion;
      if ((retired || !s.hasher.canVerify(record?.hashScheme, version)) && record !== null) {
        this.#warnRetiredVersion(
          retired,
          retired && record.hashScheme === "sha256" ? "sha256" : version,
        );
      }
      // Counted in a stored key's bucket; an unknown prefix does the same work, counting nothing.
      const at = recording === "nothing"
        ? undefined
        : this.#refusalAt(s.wallAt?.(start, undefined), true);
      if (at !== undefined) {
        s.usage?.refused(record?.id ?? null, record?.tenantId ?? "", "api_key_invalid", at);
      }
      throw this.#invalid(recording, start, prefix, environment, undefined, at);
    }
    const known = { keyId: record.id, tenantId: record.tenantId, environment: record.environment };
    // The secret is proven: the key's <env> segment must be the record's (the checksum is public).
    if (environment !== record.environment) {
      throw this.#invalid(recording, start, prefix, environment, known);
    }
    const context = freezeContext(record);
    // A key rotated without grace is refused whatever this instance's clock says (acceptedUntilMs).
    const expiresAtMs = acceptedUntilMs(record);
    // Revoked and expired never end: kept like a success, so a proven key's refusal costs no read.
    const keep = (refused?: "revoked" | "expired") => {
      if (recording === "nothing") return;
      cache?.set(prefix, {
        secret,
        layout,
        context,
        expiresAtMs,
        cachedUntil: s.monotonic() + cache.ttlMs,
        ...(refused && { refused }),
      }, generation);
    };
    if (record.revokedAt !== null) {
      keep("revoked");
      throw this.#failure(
        recording,
        start,
        "revoked",
        "api_key_revoked",
        prefix,
        environment,
        known,
      );
    }
    // A key without expiry needs no wall-clock read; one that has one serves the request's other uses.
    const wallMs = expiresAtMs === Infinity ? undefined : s.clock().getTime();
    miss.wallMs = wallMs;
    if (wallMs !== undefined && expiresAtMs <= wallMs) {
      keep("expired");
      throw this.#failure(
        recording,
        start,
        "expired",
        "api_key_expired",
        prefix,
        environment,
        known,
        wallMs,
      );
    }
    if (recording === "nothing") return context;
    s.upgrade?.afterVerified(record, secret);
    // A first use may start the grace period of a rotation (handled off the request path); within
    // an authorization, only once the request is authorized (a denied one is no use).
    const first = record.lastUsedAt === null;
    if (first && recording === "check") {
      this.#unused.add(context);
      this.#unusedAdded++;
    }
    keep();
    return this.#verified(recording, start, context, wallMs, first);
  }

  /** Whether `context` was never used (a first use now): taken out of `#unused` once. */
  #takeUnused(context: ApiKeyContext): boolean {
    if (this.#unusedAdded === 0 || !this.#unused.delete(context)) return false;
    this.#unusedAdded--;
    return true;
  }

  /**
   * Records a verified use of `context` (see `Recording`), a key's first use
   * when `first`, all at the request's one time (`#timeOf`); `wallMs`: the
   * wall-clock time read, if one was.
   */
  #verified(
    recording: Recording,
    start: number,
    context: ApiKeyContext,
    wallMs?: number,
    first = false,
  ): ApiKeyContext {
    if (recording === "nothing") return context;
    // An authorization writes `lastUsedAt` (or counts the use) once its checks passed.
    const use = recording !== "check";
    const usage = this.#s.usage;
    const event = recording === "use+event";
    const at = use && (first || usage !== undefined || event)
      ? this.#timeOf(start, wallMs)
      : wallMs;
    if (use) {
      if (first) this.#firstUse.seen(context.keyId, at!);
      if (usage === undefined) this.#touchLastUsed(context.keyId, start, at);
      else usage.accepted(context.keyId, context.tenantId, 1, at!);
    }
    this.#metric(start, "success", context.environment);
    if (event) this.#used(context, at!);
    return context;
  }

  /**
   * The one wall-clock ms of a verify whose verification began at monotonic
   * `start`, for its usage count, first use and `api_key.used`: the clock
   * read it made (`read`), else with the default clocks its monotonic start's
   * (`settings.wallAt`), else the service's `clock` read now. Called once per
   * verify: what takes the time takes it from that call (an authorization's
   * checks take it from `#checked`, a refusal's from `#refusalAt`).
   */
  #timeOf(start: number, read: number | undefined): number {
    const s = this.#s;
    return s.wallAt?.(start, read) ?? read ?? s.clock().getTime();
  }

  /**
   * Writes `lastUsedAt`, unless written within `debounceMs` before `now` (the
   * monotonic time the use began; 0: every time); never awaited. At `at`, the
   * request's one time when it has one; else the clock read once the write
   * is due (none for a debounced use).
   */
  #touchLastUsed(keyId: string, now: number, at: number | undefined): void {
    const s = this.#s;
    if (s.debounceMs > 0) {
      const last = this.#lastTouched.get(keyId);
      if (last !== undefined && now - last < s.debounceMs) return;
      if (last === undefined && this.#lastTouched.size >= MAX_DEBOUNCE_ENTRIES) {
        this.#lastTouched.delete(this.#lastTouched.keys().next().value!);
      }
      this.#lastTouched.set(keyId, now);
    }
    s.storage.touchLastUsed(
      keyId,
      at === undefined ? s.clock : clockAt(at),
      s.taps.span?.("api_key.storage.touch"),
    );
  }

  /** Emits the one `api_key.verification` metric of a verify begun at `start`. */
  #metric(start: number, outcome: ApiKeyVerificationOutcome, environment?: Environment): void {
    const emit = this.#s.emitMetric;
    if (emit === undefined) return;
    const metric: ApiKeyVerificationMetric = {
      type: "api_key.verification",
      outcome,
      durationMs: this.#s.monotonic() - start,
    };
    if (environment !== undefined) metric.environment = environment;
    emit(metric);
  }

  /**
   * Reports a failed verify begun at `start` (usage count, metric, auth failure,
   * at the request's one time: `wallMs` if read, see `#timeOf`) unless
   * recording nothing; returns the error (an authorization's `#denied` takes
   * its time from `#refusedAt`).
   */
  #failure(
    recording: Recording,
    start: number,
    outcome: ApiKeyVerificationOutcome,
    code: ApiKeyErrorCode,
    prefix: string | null,
    environment: Environment | undefined,
    known?: KnownKey,
    wallMs?: number,
  ): ApiKeyError {
    const error = apiKeyError(code);
    if (recording === "nothing") return error;
    const s = this.#s;
    const at = this.#refusalAt(s.wallAt?.(start, wallMs) ?? wallMs, known !== undefined);
    if (known !== undefined) {
      s.usage?.refused(known.keyId, known.tenantId, code as ApiKeyUsageRefusalCode, at!);
    }
    this.#report(start, outcome, code, prefix, at, environment, known);
    if (recording === "check" && at !== undefined) this.#refusedAt.set(error, at);
    return error;
  }

  /** `#failure` of a key refused `api_key_invalid` (a wrong secret, layout or environment). */
  #invalid(
    recording: Recording,
    start: number,
    prefix: string,
    environment: Environment,
    known?: KnownKey,
    wallMs?: number,
  ): ApiKeyError {
    return this.#failure(
      recording,
      start,
      "invalid",
      "api_key_invalid",
      prefix,
      environment,
      known,
      wallMs,
    );
  }

  /** The metric of a failed verify, then the auth failure at `at` (see `#authFailed`). */
  #report(
    start: number,
    outcome: ApiKeyVerificationOutcome,
    code: ApiKeyErrorCode,
    prefix: string | null,
    at: number | undefined,
    environment?: Environment,
    known?: KnownKey,
  ): void {
    this.#metric(start, outcome, environment);
    this.#authFailed(prefix, code, known, at);
  }

  /**
   * Calls `onAuthFailed` (not awaited, contained) and emits `api_key.auth_failed`
   * at `at` (the request's wall-clock ms; one clock read when it has none).
   */
  #authFailed(
    prefix: string | null,
    code: ApiKeyErrorCode,
    known: KnownKey | undefined,
    at: number | undefined,
  ): void {
    const s = this.#s;
    s.notifyAuthFailed?.(prefix, code);
    s.emitEvent?.({ type: "api_key.auth_failed", at: dateOf(at, s.clock), prefix, code, ...known });
  }

  /** Emits `api_key.used` for `context` at `atMs`, the request's one time. */
  #used(context: ApiKeyContext, atMs: number): void {
    this.#s.emitEvent?.({
      type: "api_key.used",
      at: new Date(atMs),
      keyId: context.keyId,
      tenantId: context.tenantId,
      prefix: context.prefix,
      environment: context.environment,
      scopes: [...context.scopes],
    });
  }

  #warnNoLimiter(): void {
    if (this.#noLimiterWarned) return;
    this.#noLimiterWarned = true;
    console.warn(
      "api-keys: a key stored with rate limits or credits was refused " +
        "(api_key_rate_limit_unavailable): this service has no limiter; pass `limiter`",
    );
  }

  /** Warns once per line about records on a retired or unconfigured version (or retired sha256). */
  #warnRetiredVersion(retired: boolean, version: number | "sha256"): void {
    const what = version === "sha256" ? "sha256" : `pepper version ${version}`;
    const why = retired ? "retired (retiredPepperVersions)" : "not configured";
    const line =
      `api-keys: a key record uses ${what}, which is ${why}; such keys verify as invalid`;
    if (this.#retiredVersionsWarned.has(line)) return;
    this.#retiredVersionsWarned.add(line);
    console.warn(this.#s.redact(line));
  }
}
