/**
 * Rate limits and credits in the API-key flows: a key's policies validated and
 * compiled once (create, rotate, each record read), the per-request check and
 * credit spend of `authorize`/`authorizeRequest` with a `limiter`, the
 * shared-policy rule of `create`, and the response fields both bindings write.
 * Over 300 lines because the rate-limit rules of the API-key component live
 * here only, each export with its example.
 *
 * @module
 */
import type {
  CounterResult,
  CreditRefill,
  RateLimitBalance,
  RateLimitCheckOptions,
  RateLimitCredits,
  RateLimiter,
  RateLimitResult,
} from "../../rate_limits/mod.ts";
// Two light public files of rate_limits/mod.ts, not the barrel: `./api-keys/nest` would load the
// limiter, the memory store and the throttler at import (issue 41).
import {
  type CompiledRateLimitPolicy,
  compileRateLimitPolicies,
  type RateLimitPolicy,
} from "../../rate_limits/policy.ts";
import { type Credits, settleCredits } from "../../rate_limits/credits.ts";
import { assertKnownFields } from "../../telemetry/_known_fields.ts";
import { assertCost, assertCount } from "./_count.ts";
import { RATE_LIMIT_FIELD, RATE_LIMIT_POLICY_FIELD } from "./_rate_limit_fields.ts";
import { loadedSha256, loadSha256 } from "../hasher.ts";
import { apiKeyError, ApiKeyValidationError } from "../errors.ts";
import { type Redact, warnOnce } from "../_sinks.ts";
import { errorNameOf, isBug } from "../../telemetry/_error_name.ts";
import type { ApiKeyCreditsExhaustedEvent, ApiKeyCreditsLowEvent } from "../events.ts";
import type {
  ApiKeyContext,
  ApiKeyCreditBalanceOwner,
  ApiKeyCredits,
  ApiKeyPoolCredits,
  ApiKeyRateLimitPolicy,
  ApiKeyRecord,
  AuthorizeOptions,
} from "../types.ts";

/**
 * Picks the policies of a request in place of the key's stored ones (plan-based
 * limits): sync or async; `undefined` or `[]` means no limit. Its answer is
 * validated (a `TypeError` naming the policy), again when it changed in place
 * since (a plan table edited); a throw, a rejection or a bad
 * answer is handled as an unavailable store (`onStoreError`) and warned about once.
 *
 * @example
 * ```ts
 * import type { ApiKeyRateLimitResolver } from "./_limits.ts";
 * const byPlan: ApiKeyRateLimitResolver = (context) =>
 *   context.scopes.includes("plan:write") ? [{ name: "pro", limit: 1_000, windowMs: 60_000 }] : [{ name: "free", limit: 60, windowMs: 60_000 }];
 * ```
 */
export type ApiKeyRateLimitResolver = (
  context: ApiKeyContext,
  request: unknown,
) =>
  | readonly ApiKeyRateLimitPolicy[]
  | undefined
  | Promise<readonly ApiKeyRateLimitPolicy[] | undefined>;

/** A validated list: the stored form (frozen) and the limiter's, with who shares each counter. */
interface Compiled {
  readonly list: readonly ApiKeyRateLimitPolicy[];
  readonly policies: readonly CompiledRateLimitPolicy[];
  readonly shared: readonly boolean[];
}

/** Lists compiled so far, by identity (the input and the frozen stored form). */
const COMPILED = new WeakMap<object, Compiled>();

/** Input lists whose field names `checkedCompile` checked since their last compile. */
const CHECKED = new WeakSet<object>();

/** The fields of a policy the limiter reads (`compileRateLimitPolicies` refuses any other). */
const LIMITER_FIELDS = ["name", "limit", "windowMs", "cost", "subSecond"] as const satisfies (
  keyof RateLimitPolicy
)[];

/** The fields of a key's policy: any other is refused on input (`sharedby` for `sharedBy`). */
const KEY_POLICY_FIELDS: readonly string[] = [
  ...LIMITER_FIELDS,
  "sharedBy",
] satisfies (keyof ApiKeyRateLimitPolicy)[];

/** `policy` with the limiter's fields only (not an object: as it is, for its error). */
function limiterFields(policy: unknown): unknown {
  if (typeof policy !== "object" || policy === null) return policy;
  const fields: Record<string, unknown> = {};
  for (const field of LIMITER_FIELDS) {
    const value = (policy as Record<string, unknown>)[field];
    if (value !== undefined) fields[field] = value;
  }
  return fields;
}

/** Whether each policy of `input` still reads as `list` (its stored form) says, `sharedBy` too. */
function unchanged(input: unknown, list: readonly ApiKeyRateLimitPolicy[]): boolean {
  if (!Array.isArray(input) || input.length !== list.length) return false;
  return list.every((stored, i) => {
    const p = input[i] as Partial<ApiKeyRateLimitPolicy> | null;
    return typeof p === "object" && p !== null && p.name === stored.name &&
      p.limit === stored.limit && p.windowMs === stored.windowMs &&
      (p.cost ?? 1) === stored.cost && (p.subSecond === true) === (stored.subSecond === true) &&
      p.sharedBy === stored.sharedBy;
  });
}

/**
 * `input` validated and compiled; fields other than a policy's are ignored
 * (a stored record written by another version keeps verifying; input, the
 * resolver's answer and a route's own policies, by `checkedCompile`).
 * The library's own forms (the stored form, a list `compileRateLimitPolicies`
 * made) cannot change: known, they are answered by identity. Any other list
 * may have been changed in place since (a plan table edited, a config
 * reload): its fields are compared with its last compile's, and a changed
 * list is validated and compiled again.
 */
function compile(input: unknown): Compiled {
  const known = typeof input === "object" && input !== null ? COMPILED.get(input) : undefined;
  if (
    known !== undefined &&
    (input === known.list || input === known.policies || unchanged(input, known.list))
  ) return known;
  if (known !== undefined) CHECKED.delete(input as object);
  const policies = compileRateLimitPolicies(
    (Array.isArray(input) ? input.map(limiterFields) : input) as RateLimitPolicy[],
  );
  const shared = (input as readonly ApiKeyRateLimitPolicy[]).map(({ sharedBy }, i) => {
    if (sharedBy !== undefined && sharedBy !== "tenant") {
      throw new TypeError(`rate-limit policy "${policies[i].name}": sharedBy must be "tenant"`);
    }
    return sharedBy === "tenant";
  });
  const list = Object.freeze(
    policies.map((policy, i) =>
      Object.freeze(shared[i] ? { ...policy, sharedBy: "tenant" as const } : { ...policy })
    ),
  );
  const compiled = { list, policies, shared: Object.freeze(shared) };
  COMPILED.set(input as object, compiled);
  COMPILED.set(list, compiled);
  return compiled;
}

/**
 * `compile(input)`, refusing a field other than a policy's (a `TypeError`
 * naming the policy, the field and the known ones): a misspelt `sharedBy` is
 * a tenant-wide cap silently lost. Checked once per list (again when it
 * changed in place).
 */
function checkedCompile(input: unknown): Compiled {
  const compiled = compile(input);
  if (input === compiled.list || input === compiled.policies || CHECKED.has(input as object)) {
    return compiled;
  }
  (input as readonly object[]).forEach((policy, i) =>
    assertKnownFields(
      policy,
      KEY_POLICY_FIELDS,
      `rate-limit policy "${compiled.list[i].name}"`,
      "field",
    )
  );
  CHECKED.add(input as object);
  return compiled;
}

/**
 * Validates a key's policies as input (`create`, `rotate`, a route's own):
 * 1–16, see `compileRateLimitPolicies`; `sharedBy` absent or `"tenant"`; no
 * other field. Returns their frozen stored form (each `cost` filled in),
 * compiled once per list (again when a field changed in place since).
 * Throws a `TypeError` naming the bad policy.
 *
 * @example
 * ```ts
 * import { keyRateLimits } from "./_limits.ts";
 * keyRateLimits([{ name: "api", limit: 10, windowMs: 1_000 }])[0].cost; // 1
 * ```
 */
export function keyRateLimits(input: unknown): readonly ApiKeyRateLimitPolicy[] {
  return checkedCompile(input).list;
}

/**
 * The frozen stored form of a stored record's policies (`isStoredRateLimits`
 * holds), fields of another version left out: read back, never refused for them.
 *
 * @example
 * ```ts
 * import { storedRateLimits } from "./_limits.ts";
 * storedRateLimits([{ name: "api", limit: 10, windowMs: 1_000, cost: 1, plan: "pro" }])[0]; // { name: "api", limit: 10, windowMs: 1000, cost: 1 }
 * ```
 */
export function storedRateLimits(value: unknown): readonly ApiKeyRateLimitPolicy[] {
  return compile(value).list;
}

/**
 * Whether a stored `rateLimits` value is absent or a valid policy list (the
 * record check of the storage wrapper).
 *
 * @example
 * ```ts
 * import { isStoredRateLimits } from "./_limits.ts";
 * isStoredRateLimits([{ name: "api", limit: 0, windowMs: 1 }]); // false
 * ```
 */
export function isStoredRateLimits(value: unknown): boolean {
  if (value === undefined) return true;
  try {
    compile(value);
    return true;
  } catch {
    return false;
  }
}

/**
 * Refuses (`ApiKeyValidationError` on `rateLimits`) a shared policy whose
 * limit or window differs from the policy of that name on another key of the
 * tenant (`records`, its keys listed at create or rotate).
 *
 * @example
 * ```ts
 * import { assertTenantSharedPolicies } from "./_limits.ts";
 * assertTenantSharedPolicies([{ name: "day", limit: 5, windowMs: 1_000, sharedBy: "tenant" }], []);
 * ```
 */
export function assertTenantSharedPolicies(
  policies: readonly ApiKeyRateLimitPolicy[],
  records: readonly ApiKeyRecord[],
): void {
  for (const policy of policies) {
    if (policy.sharedBy !== "tenant") continue;
    for (const record of records) {
      const other = record.rateLimits?.find((p) =>
        p.sharedBy === "tenant" && p.name === policy.name
      );
      if (
        other !== undefined && (other.limit !== policy.limit || other.windowMs !== policy.windowMs)
      ) {
        throw new ApiKeyValidationError(
          "rateLimits",
          `shared policy "${policy.name}" must keep the tenant's limit ${other.limit} per ${other.windowMs} ms`,
        );
      }
    }
  }
}

/** Longest subject kept readable; a longer one is hashed (the store takes at most 512 characters). */
const MAX_READABLE_SUBJECT = 200;
/**
 * A counter's subject: `key:` or `tenant:` and the URI-encoded id when that
 * fits in 200 characters, else `key#` or `tenant#` and the SHA-256 (hex) of
 * the id's UTF-16 code units, so every id `create` accepts (any length, lone
 * surrogates) can be counted and two ids never share a counter. SHA-256 loads
 * with the service's limiter (`RequestLimits`, awaited by its `apply`); a
 * hashed subject asked before that throws (a check fails closed).
 *
 * @example
 * ```ts
 * import { counterSubjectOf } from "./_limits.ts";
 * counterSubjectOf("tenant", "acme"); // "tenant:acme"
 * ```
 */
export function counterSubjectOf(kind: "key" | "tenant", id: string): string {
  if (id.length <= MAX_READABLE_SUBJECT) {
    try {
      const readable = `${kind}:${encodeURIComponent(id)}`;
      if (readable.length <= MAX_READABLE_SUBJECT) return readable;
    } catch {
      // a lone surrogate: hashed below
    }
  }
  const units = new Uint8Array(id.length * 2);
  for (let i = 0; i < id.length; i++) {
    units[2 * i] = id.charCodeAt(i) & 0xff;
    units[2 * i + 1] = id.charCodeAt(i) >> 8;
  }
  const sha256 = loadedSha256();
  if (sha256 === undefined) {
    loadSha256().catch(() => {});
    throw new Error(`api-keys: the SHA-256 of a long ${kind} id is still loading`);
  }
  let hex = "";
  for (const byte of sha256(units)) hex += byte.toString(16).padStart(2, "0");
  return `${kind}#${hex}`;
}

/** Whose balance a counter subject is: a key's or a tenant's, by id. */
export interface SubjectOwner {
  /** A key's balance (its `balanceKeyId`'s) or a tenant's pool. */
  readonly kind: "key" | "tenant";
  /** The key or tenant id. */
  readonly id: string;
}

/**
 * The ids of the hashed (`key#`, `tenant#`) credit subjects a limiter whose
 * store drains (`drainCreditChanges`) may hand back, so a write-back finds
 * their records: noted before each spend or change is sent, kept until a
 * successful drain two passes later (a spend noted then was drained by then)
 * that started with no drain answered late pending (`drainPending`).
 * Memory: the hashed subjects spent in the last two intervals; nothing is
 * evicted that a drain may still answer.
 */
export class HashedIds {
  readonly #ids = new Map<string, { kind: "key" | "tenant"; id: string; pass: number }>();
  #pass = 0;

  /** Notes `owner` as whose balance `subject` is (a hashed subject only; constant work). */
  note(subject: string, owner: SubjectOwner): void {
    const known = this.#ids.get(subject);
    if (known !== undefined) known.pass = this.#pass;
    else this.#ids.set(subject, { kind: owner.kind, id: owner.id, pass: this.#pass });
  }

  /** Whose balance hashed `subject` is, if noted and kept. */
  get(subject: string): SubjectOwner | undefined {
    return this.#ids.get(subject);
  }

  /** Starts a write-back pass (before its drain): its number, for `drained`. */
  startPass(): number {
    return ++this.#pass;
  }

  /** Pass `pass`'s drain succeeded: forgets the subjects noted before the pass ahead of it. */
  drained(pass: number): void {
    for (const [subject, { pass: noted }] of this.#ids) {
      if (noted < pass - 1) this.#ids.delete(subject);
    }
  }
}

/** The `HashedIds` of each limiter whose store drains. */
const HASHED_IDS = new WeakMap<RateLimiter, HashedIds>();

/**
 * The `HashedIds` of `limiter` (`undefined` when its store does not drain:
 * nothing is written back, so nothing is noted).
 *
 * @example
 * ```ts
 * import { createRateLimiter } from "../../rate_limits/limiter.ts";
 * import { hashedIdsOf } from "./_limits.ts";
 * hashedIdsOf(createRateLimiter({ logger: () => {} })); // undefined: the in-memory store
 * ```
 */
export function hashedIdsOf(limiter: RateLimiter | undefined): HashedIds | undefined {
  if (limiter?.drainCreditChanges === undefined) return undefined;
  let ids = HASHED_IDS.get(limiter);
  if (ids === undefined) HASHED_IDS.set(limiter, ids = new HashedIds());
  return ids;
}

/**
 * The key or tenant id of a counter subject `counterSubjectOf` made: a
 * readable one decoded, a hashed one as `hashed` noted it (`null` when it did
 * not); `undefined` for another subject.
 *
 * @example
 * ```ts
 * import { idOfSubject } from "./_limits.ts";
 * idOfSubject("key:k%201", undefined); // { kind: "key", id: "k 1" }
 * ```
 */
export function idOfSubject(
  subject: string,
  hashed: HashedIds | undefined,
): SubjectOwner | null | undefined {
  const kind = subject.startsWith("key") ? "key" : subject.startsWith("tenant") ? "tenant" : null;
  if (kind === null) return undefined;
  const rest = subject.slice(kind.length);
  if (rest.startsWith("#")) return hashed?.get(subject) ?? null;
  if (!rest.startsWith(":")) return undefined;
  try {
    return { kind, id: decodeURIComponent(rest.slice(1)) };
  } catch {
    return undefined;
  }
}

/**
 * The limiter subject of a key's credit balance (named `credits`): its
 * `balanceKeyId`'s, else its own, so a rotation chain spends one balance.
 *
 * @example
 * ```ts
 * import { creditSubjectOf } from "./_limits.ts";
 * creditSubjectOf("k2", { balanceKeyId: "k1" }); // "key:k1"
 * ```
 */
export function creditSubjectOf(
  keyId: string,
  credits: Pick<ApiKeyCredits, "balanceKeyId">,
): string {
  return counterSubjectOf("key", credits.balanceKeyId ?? keyId);
}

/** The fields of a refill rule, of either form (`CreditRefill`). */
const REFILL_FIELDS: readonly string[] = Object.keys(
  { amount: true, everyMs: true, interval: true, day: true } satisfies Record<
    CreditRefill extends infer R ? R extends unknown ? keyof R : never : never,
    true
  >,
);

/**
 * A stored refill rule without the fields of another version: read back, never
 * refused for them (`compileCreditRefill` and the limiter refuse an unknown
 * field). A copy; anything but an object is answered as it is (the record
 * check refuses it).
 *
 * @example
 * ```ts
 * import { storedRefill } from "./_limits.ts";
 * storedRefill({ amount: 5, everyMs: 60_000, cap: 9 } as never); // { amount: 5, everyMs: 60000 }
 * ```
 */
export function storedRefill<T>(refill: T): T {
  if (typeof refill !== "object" || refill === null) return refill;
  const rule: Record<string, unknown> = {};
  for (const field of REFILL_FIELDS) {
    if (Object.hasOwn(refill, field)) rule[field] = (refill as Record<string, unknown>)[field];
  }
  return rule as T;
}

/**
 * The limiter's credit counter of a key's stored credits: the last
 * written-back balance as `initial`, from `updatedAt`, with its refill
 * (`storedRefill`).
 *
 * @example
 * ```ts
 * import { creditCounterOf } from "./_limits.ts";
 * creditCounterOf({ remaining: 5, updatedAt: new Date(0) }, "t1");
 * // { initial: 5, initialAt: 0, slot: "tenant:t1" }
 * ```
 */
export function creditCounterOf(
  credits: ApiKeyCredits | ApiKeyPoolCredits,
  tenantId: string,
): RateLimitCredits {
  return {
    initial: credits.remaining,
    initialAt: credits.updatedAt.getTime(),
    slot: counterSubjectOf("tenant", tenantId),
    ...(credits.refill === undefined ? {} : { refill: storedRefill(credits.refill) }),
  };
}

/**
 * The balances a key's stored credits name: its own (`undefined` when it
 * spends only its tenant's pool) and the tenant's pool (`undefined` without).
 *
 * @example
 * ```ts
 * import { creditPartsOf } from "./_limits.ts";
 * creditPartsOf({ remaining: 5, updatedAt: new Date(0), sharedBy: "tenant" }).own; // undefined
 * ```
 */
export function creditPartsOf(
  credits: ApiKeyCredits,
): { own: ApiKeyCredits | undefined; pool: ApiKeyPoolCredits | undefined } {
  return credits.sharedBy === "tenant"
    ? { own: undefined, pool: credits }
    : { own: credits, pool: credits.pool };
}

/**
 * The next refill of a balance with `credits`' refill rule that a store answered `result` for,
 * around `nowMs`: the store's boundary itself (`appliedAt`), never a round trip early; `null`
 * without one.
 */
export function nextRefillOf(credits: Credits, result: CounterResult, nowMs: number): Date | null {
  return result.resetMs < 0
    ? null
    : new Date(appliedAt(credits, result, nowMs).getTime() + result.resetMs);
}

/**
 * When the store applied a change (or read) of a balance with `credits`'
 * refill rule that it answered `result` for, this clock reading `nowMs` around it: the
 * store's own moment, `resetMs` before its next refill (the refill boundary
 * nearest `nowMs + resetMs`, so a clock a few ms off the store's, or a call
 * across a boundary, still lands in the store's refill period). `nowMs`
 * without a refill.
 */
export function appliedAt(credits: Credits, result: CounterResult, nowMs: number): Date {
  if (credits.refill === undefined || result.resetMs < 0) return new Date(nowMs);
  const seen = nowMs + result.resetMs;
  const { lastRefillAt, nextRefillAt } = settleCredits(credits, seen, seen);
  const boundary = seen - lastRefillAt! <= nextRefillAt! - seen ? lastRefillAt! : nextRefillAt!;
  return new Date(boundary - result.resetMs);
}

/**
 * The limiter's balances of a key's stored credits, in the order a check
 * spends them: its own (subject: its `balanceKeyId`'s or its own), then the
 * tenant's pool (subject: the tenant), each in the tenant's slot.
 *
 * @example
 * ```ts
 * import { creditBalancesOf } from "./_limits.ts";
 * creditBalancesOf("k1", "t1", { remaining: 5, updatedAt: new Date(0), sharedBy: "tenant" })[0].owner; // "tenant"
 * ```
 */
export function creditBalancesOf(
  keyId: string,
  tenantId: string,
  credits: ApiKeyCredits,
): (RateLimitBalance & { owner: ApiKeyCreditBalanceOwner })[] {
  const { own, pool } = creditPartsOf(credits);
  const balances: (RateLimitBalance & { owner: ApiKeyCreditBalanceOwner })[] = [];
  if (own !== undefined) {
    const subject = creditSubjectOf(keyId, own);
    balances.push({
      owner: "key",
      subject,
      credits: { ...creditCounterOf(own, tenantId), subject },
    });
  }
  if (pool !== undefined) {
    const subject = counterSubjectOf("tenant", tenantId);
    balances.push({
      owner: "tenant",
      subject,
      credits: { ...creditCounterOf(pool, tenantId), subject },
    });
  }
  return balances;
}

/** The policies of one check and who shares each counter (`true`: the tenant). */
interface Picked {
  readonly policies: readonly CompiledRateLimitPolicy[];
  readonly shared: readonly boolean[];
}

/** A route's `AuthorizeOptions.rateLimits` with its own policies compiled. */
type Route = string | readonly string[] | Compiled | undefined;

/**
 * The route's pick (names) or its own policies, per `AuthorizeOptions.rateLimits`.
 * A `TypeError` when the route names a policy a key with policies lacks.
 */
function routePolicies(base: Compiled | undefined, route: Route, keyId: string): Picked {
  const none: Picked = { policies: [], shared: [] };
  if (route === undefined) return base ?? none;
  const all = base ?? none;
  const pick = (keep: (name: string) => boolean, own: Picked = none): Picked => {
    const at = all.policies.flatMap((policy, i) => keep(policy.name) ? [i] : []);
    const policies = [...at.map((i) => all.policies[i]), ...own.policies];
    return {
      policies: policies.length === 0 ? [] : compileRateLimitPolicies(policies),
      shared: [...at.map((i) => all.shared[i]), ...own.shared],
    };
  };
  if (typeof route === "string" || Array.isArray(route)) {
    const names: readonly string[] = typeof route === "string" ? [route] : route;
    const missing = names.filter((name) => !all.policies.some((policy) => policy.name === name));
    if (base !== undefined && missing.length > 0) {
      const names = missing.map((n) => `"${n}"`).join(", ");
      const policies = all.policies.map(({ name }) => name).join(", ");
      throw keyBug(
        (key) =>
          `the route's rateLimits name ${names}, which ${key} does not have (its policies: ${policies})`,
        keyId,
      );
    }
    return pick((name) => names.includes(name));
  }
  const own = route as Compiled;
  return pick((name) => !own.policies.some((p) => p.name === name), own);
}

/**
 * A route's policy names, frozen: each a policy name, none twice, at most
 * `MAX_RATE_LIMIT_POLICIES` (the policy compiler's own rules, on policies of
 * those names); else a `TypeError` (`rateLimits: ...`). A name no policy can
 * have would otherwise pass start-up and fail every request of a key with policies.
 */
function policyNames(names: readonly string[]): readonly string[] {
  try {
    compileRateLimitPolicies(names.map((name) => ({ name, limit: 1, windowMs: 1_000 })));
  } catch (error) {
    throw new TypeError(`rateLimits: ${(error as Error).message}`);
  }
  return Object.freeze([...names]);
}

/**
 * Throws a `TypeError` starting with `who` for a `cost` beside `rateLimits: false`: recorded as
 * usage, it would never be charged.
 */
export function assertChargedRoute(
  route: Pick<AuthorizeOptions, "rateLimits" | "cost">,
  who: string,
): void {
  if (route.rateLimits === false && route.cost !== undefined) {
    throw new TypeError(
      `${who}: a cost with rateLimits false is never charged (usage would record it): drop one`,
    );
  }
}

/**
 * Validates a route's `rateLimits` (names, policies, or `false`: counts
 * nothing, with no `cost`) and `cost` (0–`MAX_CREDITS`) where it is declared (a decorator, a
 * route option); returns them frozen. Throws a `TypeError` starting with `who`.
 *
 * @example
 * ```ts
 * import { routeRateLimitOf } from "./_limits.ts";
 * routeRateLimitOf("burst", 5, "RateLimit"); // { rateLimits: ["burst"], cost: 5 }
 * ```
 */
export function routeRateLimitOf(
  rateLimits: unknown,
  cost: unknown,
  who: string,
): Readonly<Pick<AuthorizeOptions, "rateLimits" | "cost">> {
  const route: Pick<AuthorizeOptions, "rateLimits" | "cost"> = {};
  try {
    if (cost !== undefined) {
      route.cost = assertCost(cost, "cost");
    }
    if (typeof rateLimits === "string") rateLimits = [rateLimits];
    if (rateLimits === false) {
      route.rateLimits = false;
    } else if (
      Array.isArray(rateLimits) && rateLimits.every((name) => typeof name === "string")
    ) {
      if (rateLimits.length === 0) throw new TypeError("name at least one policy");
      route.rateLimits = policyNames(rateLimits);
    } else if (rateLimits !== undefined) {
      route.rateLimits = keyRateLimits(rateLimits);
    }
  } catch (error) {
    throw new TypeError(`${who}: ${(error as Error).message}`);
  }
  assertChargedRoute(route, who);
  return Object.freeze(route);
}

/** The cause of a bug as its message tells it. */
function causeText(cause: unknown): string {
  return cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
}

/** A `TypeError` naming `where` and the cause's message (a bug: answered 500, never passed open). */
function bug(where: string, cause: unknown): TypeError {
  return new TypeError(`${where}: ${causeText(cause)}`, { cause });
}

/** The identities of bugs met by one key, without that key (see `bugIdentity`). */
const KEYLESS_BUGS = new WeakMap<Error, string>();

/**
 * A `TypeError` whose message is `message` naming key `keyId`; its bug identity
 * (`bugIdentity`) names no key, so every key meeting the bug shares it.
 */
function keyBug(message: (key: string) => string, keyId: string, cause?: unknown): TypeError {
  const error = new TypeError(message(`key ${keyId}`), cause === undefined ? undefined : { cause });
  KEYLESS_BUGS.set(error, message("the key"));
  return error;
}

/** Input the limiter refuses (a cost over MAX_CREDITS with credits, bad stored credits): a bug. */
function refused(context: ApiKeyContext, cause: unknown): TypeError {
  return keyBug(
    (key) => `the rate-limit check of ${key}: ${causeText(cause)}`,
    context.keyId,
    cause,
  );
}

/**
 * What makes bug `error` distinct for `bugReporter`: its message, without the
 * key id when a key met it (one broken route fails every key alike).
 *
 * @example
 * ```ts
 * import { bugIdentity } from "./_limits.ts";
 * bugIdentity(new TypeError("a resolver's bad policy")); // "a resolver's bad policy"
 * ```
 */
export function bugIdentity(error: Error): string {
  return KEYLESS_BUGS.get(error) ?? error.message;
}

/** Most distinct bugs a `bugReporter` remembers (a bug seen is not logged again). */
const MAX_BUG_LINES = 100;

/**
 * Logs each distinct bug (a route naming a policy a key lacks, a resolver's
 * bad policy) once through `log`, which redacts (see `serviceLog`, `_service_hooks.ts`), so a
 * broken route answering 500 on every request does not flood the log: `line`
 * is logged unless `bug` (the route and `bugIdentity`, never a key id; default
 * `line`) was.
 * Never throws.
 *
 * @example
 * ```ts
 * import { bugReporter } from "./_limits.ts";
 * const report = bugReporter(console.error);
 * report("Reports.list: the route's rateLimits name \"hourly\", which key k1 does not have");
 * ```
 */
export function bugReporter(
  log: (line: string) => void,
): (line: string, bug?: string) => void {
  const seen = new Set<string>();
  return (line, bug = line) => {
    if (seen.has(bug) || seen.size >= MAX_BUG_LINES) return;
    seen.add(bug);
    try {
      log(line);
    } catch {
      // the log itself failed: nothing left to tell
    }
  };
}

/** The answers `apply` adds to a context. */
type ApiKeyLimitAnswers = Pick<
  ApiKeyContext,
  "rateLimitResults" | "creditResult" | "creditBalance" | "tenantCreditResult"
>;

/** One check's policies and subjects, and the limiter's options of it (frozen, so it validates them once). */
interface Check {
  readonly subject: string;
  readonly policies: readonly CompiledRateLimitPolicy[];
  /** At each policy's own cost. */
  readonly options: RateLimitCheckOptions;
  /** At the last other cost asked (a route's). */
  costed?: RateLimitCheckOptions;
  /** The names of a route's list that can change, as they were when the check was built. */
  readonly names?: readonly string[];
}

/** Most route picks a key's plan keeps (an inline route list made per request is not kept past it). */
const MAX_PICKS = 32;

/**
 * What a verified key's checks need, built once per cached context: its
 * subjects, slot and credit balances, and the checks of the routes seen.
 */
class KeyPlan {
  readonly slot: string;
  readonly keySubject: string;
  readonly balances: readonly RateLimitCredits[] | undefined;
  readonly owners: readonly ApiKeyCreditBalanceOwner[];
  /** The balances of hashed subjects, whose ids a write-back needs (`HashedIds`). */
  readonly hashed: readonly (readonly [string, SubjectOwner])[];
  /** Whether a check spends the tenant's pool (its last balance). */
  readonly pooled: boolean;
  /** Whether the key has neither policies nor credits. */
  readonly idle: boolean;
  /** Checks by the base list (the key's or a resolver's) and the route. */
  readonly #checks = new WeakMap<object, Map<unknown, Check>>();
  /** The check of the last base asked with no route (the common request): no lookup. */
  #whole: { base: Compiled | undefined; check: Check } | undefined;
  /** The key's own policies compiled (`null`: none), once asked. */
  #own: Compiled | null | undefined;
  readonly #rateLimits: ApiKeyContext["rateLimits"];

  constructor(context: ApiKeyContext) {
    const { credits } = context;
    this.#rateLimits = context.rateLimits;
    this.slot = counterSubjectOf("tenant", context.tenantId);
    // A rotation chain counts on its first key's windows, as it spends its balance.
    this.keySubject = counterSubjectOf(
      "key",
      context.rateLimitKeyId ?? credits?.balanceKeyId ?? context.keyId,
    );
    const balances = credits === undefined
      ? []
      : creditBalancesOf(context.keyId, context.tenantId, credits);
    // Frozen through the refill: a check of unchanging options is validated once by the limiter.
    this.balances = balances.length === 0
      ? undefined
      : Object.freeze(balances.map(({ credits }) =>
        Object.freeze(
          typeof credits.refill === "object" && credits.refill !== null
            ? { ...credits, refill: Object.freeze({ ...credits.refill }) }
            : credits,
        )
      ));
    this.owners = Object.freeze(balances.map((b) => b.owner));
    this.hashed = balances.flatMap(({ subject, owner }) =>
      subject[owner.length] !== "#" ? [] : [
        [subject, {
          kind: owner,
          id: owner === "tenant" ? context.tenantId : credits!.balanceKeyId ?? context.keyId,
        }] as const,
      ]
    );
    this.pooled = this.owners.at(-1) === "tenant";
    this.idle = this.#rateLimits === undefined && this.balances === undefined;
  }

  /** The key's own policies compiled (a `TypeError` for a bad stored list, asked again next time). */
  get own(): Compiled | undefined {
    if (this.#own === undefined) {
      this.#own = this.#rateLimits ? compile(this.#rateLimits) : null;
    }
    return this.#own ?? undefined;
  }

  /**
   * The check of `route` over `base`, built once per pair: a route's own
   * policies kept by their compile (`checkedCompile`: built again when changed in
   * place), a list of names that can change (not frozen) built again when its
   * names changed.
   */
  check(
    base: Compiled | undefined,
    route: Exclude<AuthorizeOptions["rateLimits"], false>,
    keyId: string,
  ): Check {
    const whole = this.#whole;
    if (route === undefined && whole !== undefined && whole.base === base) return whole.check;
    const holder = base ?? KeyPlan;
    let checks = this.#checks.get(holder);
    if (checks === undefined) this.#checks.set(holder, checks = new Map());
    const picked: Route = typeof route === "object" && typeof route[0] !== "string"
      ? checkedCompile(route)
      : route as string | readonly string[] | undefined;
    const known = checks.get(picked);
    if (known !== undefined && sameNames(picked, known.names)) return known;
    const { policies, shared } = routePolicies(base, picked, keyId);
    const subjects = Object.freeze(shared.map((s) => s ? this.slot : this.keySubject));
    const check: Check = {
      subject: subjects[0] ?? this.balances?.[0].subject ?? this.keySubject,
      policies: Object.freeze(policies),
      // Every counter of a tenant's keys in one Redis Cluster slot (one node per tenant).
      options: Object.freeze({ subjects, credits: this.balances, slot: this.slot }),
      ...(Array.isArray(picked) && !Object.isFrozen(picked)
        ? { names: Object.freeze([...picked]) }
        : {}),
    };
    if (checks.size < MAX_PICKS || known !== undefined) checks.set(picked, check);
    if (route === undefined) this.#whole = { base, check };
    return check;
  }
}

/** Whether a route's list of names that can change still has the `names` its check was built for. */
function sameNames(route: Route, names: readonly string[] | undefined): boolean {
  if (names === undefined) return true;
  const now = route as readonly string[];
  if (now.length !== names.length) return false;
  for (let i = 0; i < names.length; i++) if (now[i] !== names[i]) return false;
  return true;
}

/** Plans by cached context (a verify cache hit answers the same context object). */
const PLANS = new WeakMap<ApiKeyContext, KeyPlan>();

function planOf(context: ApiKeyContext): KeyPlan {
  let plan = PLANS.get(context);
  if (plan === undefined) PLANS.set(context, plan = new KeyPlan(context));
  return plan;
}

/** Most `creditThresholds`. */
const MAX_CREDIT_THRESHOLDS = 8;

/** The credit events of one spend. */
export type ApiKeyCreditEvent = ApiKeyCreditsLowEvent | ApiKeyCreditsExhaustedEvent;

/** The events of a spend that crosses nothing. */
const NO_EVENTS: readonly ApiKeyCreditEvent[] = Object.freeze([]);

/** The answer of an authorized `context`'s own balance, if it spends one (else `creditResult` is its pool's). */
function ownAnswer(context: ApiKeyContext): Readonly<CounterResult> | undefined {
  return context.creditBalance === "key" ? context.creditResult : undefined;
}

/**
 * How many balances the spend that authorized `context` left at 0: its own, its tenant's pool
 * (0 to 2).
 */
export function emptiedBalances(context: ApiKeyContext): number {
  return (ownAnswer(context)?.remaining === 0 ? 1 : 0) +
    (context.tenantCreditResult?.remaining === 0 ? 1 : 0);
}

/** Whether a spend of `cost` that left `remaining` fell past `threshold` (from above it to at most it). */
function fellPast(remaining: number, cost: number, threshold: number): boolean {
  return remaining + cost > threshold && threshold >= remaining;
}

/**
 * The per-request check of a service built with a `limiter`: the route's
 * policies and the key's credits in one `limiter.check`.
 *
 * @example
 * ```ts
 * import { createRateLimiter } from "../../rate_limits/limiter.ts";
 * import { RequestLimits } from "./_limits.ts";
 * const limits = new RequestLimits(createRateLimiter({ logger: () => {} }), undefined);
 * const context = { keyId: "k1", tenantId: "t1", environment: "live" as const, scopes: [], prefix: "p" };
 * await limits.apply(context, { rateLimits: [{ name: "api", limit: 1, windowMs: 1_000 }] });
 * ```
 */
export class RequestLimits {
  readonly #limiter: RateLimiter;
  readonly #hashed: HashedIds | undefined;
  readonly #resolve: ApiKeyRateLimitResolver | undefined;
  readonly #thresholds: readonly number[];
  readonly #resolverFailed: (error: unknown) => void;
  /**
   * The context last found in `PLANS`, and its plan: a key's requests in a row skip the
   * `WeakMap` look-up (dropping it cost 0.13-0.20× a cached verify on benchmark 9's credit rows).
   */
  #lastContext: ApiKeyContext | undefined;
  #lastPlan: KeyPlan | undefined;

  /** The limiter's `timeoutMs`: how long a check may hold its request. */
  get timeoutMs(): number {
    return this.#limiter.timeoutMs;
  }

  /**
   * Checks with `limiter`; policies come from `resolve` when given, else from
   * the key; `thresholds` are the validated `creditThresholds`, highest first;
   * warnings are redacted with `redact` (the service's).
   */
  constructor(
    limiter: RateLimiter,
    resolve: ApiKeyRateLimitResolver | undefined,
    thresholds: readonly number[] = [],
    redact?: Redact,
  ) {
    this.#resolverFailed = warnOnce("rateLimitResolver", redact);
    this.#limiter = limiter;
    this.#hashed = hashedIdsOf(limiter);
    this.#resolve = resolve;
    this.#thresholds = thresholds;
    // Counter subjects of long ids are hashed (`counterSubjectOf`): load SHA-256 now.
    loadSha256().catch(() => {});
  }

  /**
   * Checks the request's policies and spends its cost (`options.cost`, already
   * validated; default 1) from the key's credits, all or nothing; a route with
   * `rateLimits: false` counts and spends nothing. Answers `context` when
   * nothing applies or the store is unavailable with `onStoreError: "open"`,
   * else this request's own copy of it carrying `rateLimitResults` and
   * `creditResult` (not frozen: nothing else holds it; the cached context and
   * its arrays, which every request shares, stay frozen); throws
   * (or rejects) with `api_key_rate_limited` (a policy denies, with the results),
   * `api_key_usage_exceeded` (too few credits, with `creditResult`) or
   * `api_key_rate_limit_unavailable`; and with a `TypeError` naming the cause
   * (never an open pass) for a bug: a resolver's bad policy or `TypeError`, a
   * route naming a policy the key lacks, a check the limiter refuses.
   * Synchronous with a limiter's `checkNow` (an in-process store) and no
   * resolver, once SHA-256 is loaded: then at `nowMs` when given (the
   * request's wall-clock time, read in this call; see `RateLimiter.checkNow`).
   */
  apply(
    context: ApiKeyContext,
    options: AuthorizeOptions,
    nowMs?: number,
  ): ApiKeyContext | Promise<ApiKeyContext> {
    if (options.rateLimits === false) return context;
    // A key's plan is built once SHA-256 has loaded: found, it needs no other look-up (the
    // last key's, asked again, not even that one).
    const known = this.#resolve !== undefined
      ? undefined
      : context === this.#lastContext
      ? this.#lastPlan
      : this.#found(context, PLANS.get(context));
    if (known !== undefined) {
      // A key with neither policies nor credits, on a route adding none: nothing to check.
      if (known.idle && options.rateLimits === undefined) return context;
      return this.#check(context, options, known.own, known, nowMs);
    }
    // Counter subjects of long ids are hashed: wait once for SHA-256 to load.
    if (loadedSha256() === undefined) {
      return loadSha256().then(() => this.apply(context, options));
    }
    if (this.#resolve !== undefined) return this.#resolved(context, options);
    const plan = planOf(context);
    return this.#check(context, options, plan.own, plan, nowMs);
  }

  /** Keeps `plan`, when found, as the plan of the last context asked; returns it. */
  #found(context: ApiKeyContext, plan: KeyPlan | undefined): KeyPlan | undefined {
    if (plan !== undefined) {
      this.#lastContext = context;
      this.#lastPlan = plan;
    }
    return plan;
  }

  /** `apply` with the policies the resolver picks. */
  async #resolved(context: ApiKeyContext, options: AuthorizeOptions): Promise<ApiKeyContext> {
    let answer;
    try {
      answer = await this.#resolve!(context, options.request);
    } catch (error) {
      // A programming error is a bug: named, never its message (a caller's function's error).
      // A SyntaxError at run time is a parse (its plan service answered HTML): that service down.
      if (isBug(error) && !(error instanceof SyntaxError)) {
        throw new TypeError(`rateLimitResolver threw a ${errorNameOf(error)}`, { cause: error });
      }
      this.#resolverFailed(error);
      // Under "open" the key's balances, which need no resolver, are spent or refuse as ever
      // (with the route's own policies); the key's policies pass uncounted.
      const plan = planOf(context);
      if (plan.balances === undefined || this.#limiter.onStoreError !== "open") {
        return this.#unavailable(context);
      }
      return this.#check(context, options, undefined, plan);
    }
    let base: Compiled | undefined;
    try {
      base = answer === undefined || answer.length === 0 ? undefined : checkedCompile(answer);
    } catch (error) {
      throw bug("rateLimitResolver answered a bad policy", error);
    }
    return this.#check(context, options, base, planOf(context));
  }

  /** `apply` over the `base` policies (the key's or the resolver's) with the key's `plan`, synchronous at `nowMs`. */
  #check(
    context: ApiKeyContext,
    options: AuthorizeOptions,
    base: Compiled | undefined,
    plan: KeyPlan,
    nowMs?: number,
  ): ApiKeyContext | Promise<ApiKeyContext> {
    const check = plan.check(
      base,
      options.rateLimits as Exclude<AuthorizeOptions["rateLimits"], false>,
      context.keyId,
    );
    if (check.policies.length === 0 && plan.balances === undefined) return context;
    const { cost } = options;
    let checkOptions = check.options;
    if (cost !== undefined) {
      checkOptions = check.costed?.cost === cost
        ? check.costed
        : (check.costed = Object.freeze({ ...checkOptions, cost }));
    }
    const limiter = this.#limiter;
    // Before the spend is sent: the write-back finds the records of what the store drains.
    if (plan.hashed.length > 0 && this.#hashed !== undefined) {
      for (const [subject, owner] of plan.hashed) this.#hashed.note(subject, owner);
    }
    let answer;
    try {
      answer = limiter.checkNow !== undefined
        ? limiter.checkNow(check.subject, check.policies, checkOptions, nowMs)
        : Promise.resolve(limiter.check(check.subject, check.policies, checkOptions));
    } catch (error) {
      throw refused(context, error);
    }
    if (!(answer instanceof Promise)) return this.#answer(context, plan, check, answer, cost);
    return answer.then(
      (result) => this.#answer(context, plan, check, result, cost),
      (error) => {
        throw refused(context, error);
      },
    );
  }

  /** The context of an allowed check; throws the refusal or the unavailability. */
  #answer(
    context: ApiKeyContext,
    plan: KeyPlan,
    check: Check,
    result: RateLimitResult,
    cost: number | undefined,
  ): ApiKeyContext {
    // "local" answers the policies with this instance's shares; a credit spend it refuses.
    if (result.unavailable && (result.outcome !== "local" || plan.balances !== undefined)) {
      return this.#unavailable(context);
    }
    // The limiter's answers are fresh per check: kept as they are, not copied. Written
    // into the context's one copy when allowed (the request's own, so not frozen: a
    // freeze is a runtime call V8 does not inline, 0.05-0.10x a cached verify), else
    // into the error.
    const balances = result.balances;
    const answers: ApiKeyLimitAnswers = result.allowed ? { ...context } : {};
    if (check.policies.length > 0) answers.rateLimitResults = result.policies;
    if (balances !== undefined) {
      // Allowed: the first balance's answer (the key's own; the pool's alone). Refused: the
      // refusing balance's (the key's own first when both refuse), and no owner named when a
      // policy alone refused (`creditBalance` is whose balance refused).
      const at = result.allowed ? 0 : balances.findIndex((b) => !b.allowed);
      answers.creditResult = balances[Math.max(at, 0)];
      if (at >= 0) answers.creditBalance = plan.owners[at];
      if (plan.pooled) answers.tenantCreditResult = balances[balances.length - 1];
    }
    if (result.allowed) return answers as ApiKeyContext;
    // A policy's refusal takes its code when both deny (its Retry-After waits for the balance too).
    const limited = answers.rateLimitResults?.some((r) => !r.allowed) ?? false;
    // Against the policy's own limit: a local share's (the store down) lasts only while it is down.
    if (limited) {
      result.policies.forEach((r, i) => {
        const policy = check.policies[i];
        if (!r.allowed && (cost ?? policy.cost) > policy.limit) NEVER_FITS.add(r);
      });
    }
    if (limited) {
      // A balance refusing too is named in the HTTP answers, as on api_key_usage_exceeded.
      const named = answers.creditBalance === undefined
        ? {}
        : { details: Object.freeze({ creditBalance: answers.creditBalance }) };
      throw Object.assign(apiKeyError("api_key_rate_limited"), answers, named);
    }
    // The refusing balance named in the HTTP answers too: the key's own, or the tenant's pool.
    const details = Object.freeze({ creditBalance: answers.creditBalance! });
    throw Object.assign(apiKeyError("api_key_usage_exceeded"), answers, { details });
  }

  /**
   * The events of the spend that answered `context.creditResult` (and
   * `tenantCreditResult`), per balance: `api_key.credits_low` per threshold it
   * fell past (from above it to at most it), `api_key.credits_exhausted` when it
   * reached 0, all at `atMs`, the request's wall-clock ms, else at one `clock()`
   * read only when there is an event (a spend crossing nothing reads no clock
   * and builds nothing). A pool's balance is one for the tenant's keys, so one
   * spend crosses each threshold: events once per threshold for the pool, not
   * once per key.
   */
  creditEvents(
    context: ApiKeyContext,
    cost: number,
    atMs: number | undefined,
    clock: () => Date,
  ): readonly ApiKeyCreditEvent[] {
    if (cost === 0) return NO_EVENTS;
    const own = ownAnswer(context);
    const pool = context.tenantCreditResult;
    const ownCrossed = own !== undefined && this.#crosses(own.remaining, cost);
    const poolCrossed = pool !== undefined && this.#crosses(pool.remaining, cost);
    if (!ownCrossed && !poolCrossed) return NO_EVENTS;
    const at = atMs === undefined ? clock() : new Date(atMs);
    const events: ApiKeyCreditEvent[] = [];
    if (ownCrossed) this.#crossed(events, context, own, "key", cost, at);
    if (poolCrossed) this.#crossed(events, context, pool, "tenant", cost, at);
    return events;
  }

  /** Whether a spend of `cost` that left `remaining` crossed a threshold or reached 0. */
  #crosses(remaining: number, cost: number): boolean {
    if (remaining === 0) return true;
    for (const threshold of this.#thresholds) {
      if (fellPast(remaining, cost, threshold)) return true;
    }
    return false;
  }

  /** Adds the events of one balance's `answer` to `events`. */
  #crossed(
    events: ApiKeyCreditEvent[],
    context: ApiKeyContext,
    answer: Readonly<CounterResult>,
    creditBalance: ApiKeyCreditBalanceOwner,
    cost: number,
    at: Date,
  ): void {
    const remaining = answer.remaining;
    const parts = creditPartsOf(context.credits!);
    const credits = (creditBalance === "key" ? parts.own : parts.pool)!;
    const common = {
      at,
      keyId: context.keyId,
      tenantId: context.tenantId,
      creditBalance,
      remaining,
      // The store's boundary itself: its resetMs counts from its own moment, after `at`.
      nextRefillAt: nextRefillOf(credits, answer, at.getTime()),
    };
    for (const threshold of this.#thresholds) {
      if (fellPast(remaining, cost, threshold)) {
        events.push({ type: "api_key.credits_low", ...common, threshold });
      }
    }
    if (remaining === 0) events.push({ type: "api_key.credits_exhausted", ...common });
  }

  #unavailable(context: ApiKeyContext): ApiKeyContext {
    if (this.#limiter.onStoreError === "open") return context;
    throw apiKeyError("api_key_rate_limit_unavailable");
  }
}

/** The `creditThresholds` option: 1–8 safe integers ≥ 1, deduplicated, highest first. */
function creditThresholdsOf(value: unknown, PREFIX: string): readonly number[] {
  if (value === undefined) return [];
  const name = `${PREFIX}creditThresholds`;
  if (!Array.isArray(value) || value.length > MAX_CREDIT_THRESHOLDS) {
    throw new TypeError(`${name} must be an array of at most ${MAX_CREDIT_THRESHOLDS} numbers`);
  }
  for (const threshold of value) assertCount(threshold, 1, name);
  return Object.freeze([...new Set(value as number[])].sort((a, b) => b - a));
}

/**
 * The rate-limit and credit check of the service options `limiter`,
 * `rateLimitResolver` and `creditThresholds` (`undefined` without a limiter);
 * a `TypeError` naming a bad one after `PREFIX`.
 *
 * @example
 * ```ts
 * import { buildLimits } from "./_limits.ts";
 * buildLimits(undefined, undefined, undefined, "ApiKeysServiceOptions."); // undefined
 * ```
 */
export function buildLimits(
  limiter: unknown,
  resolver: unknown,
  creditThresholds: unknown,
  PREFIX: string,
  redact?: Redact,
): RequestLimits | undefined {
  if (resolver !== undefined && typeof resolver !== "function") {
    throw new TypeError(`${PREFIX}rateLimitResolver must be a function`);
  }
  const thresholds = creditThresholdsOf(creditThresholds, PREFIX);
  if (limiter === undefined) {
    for (const [name, value] of Object.entries({ rateLimitResolver: resolver, creditThresholds })) {
      if (value !== undefined) throw new TypeError(`${PREFIX}${name} needs a limiter`);
    }
    return undefined;
  }
  const { check, ready, timeoutMs } = (limiter ?? {}) as Partial<RateLimiter>;
  if (typeof check !== "function" || typeof ready !== "function" || typeof timeoutMs !== "number") {
    throw new TypeError(`${PREFIX}limiter must be a RateLimiter (createRateLimiter)`);
  }
  return new RequestLimits(
    limiter as RateLimiter,
    resolver as ApiKeyRateLimitResolver,
    thresholds,
    redact,
  );
}

/** Refusing policy answers whose cost exceeds their limit: no wait makes it fit (the limiter's fresh objects). */
const NEVER_FITS = new WeakSet<object>();

/**
 * The `RateLimit-Policy` and `RateLimit` fields (draft-ietf-httpapi-ratelimit-headers
 * -08 to -11: one item per policy, `"name";q=<limit>;w=<window s>` and
 * `"name";r=<remaining>;t=<reset s>`) of `answers.rateLimitResults`, with
 * `legacy` the `X-RateLimit-*` trio of the policy with the least remaining, on a
 * denial of the denying policy with the longest wait (a remaining below 0 sent as 0), and
 * on a denial `Retry-After` in seconds: the longest wait of a denying policy
 * (none when one's cost exceeds its limit), else (credits denied) the latest
 * next refill of the refusing balances (none when one never refills enough).
 *
 * @example
 * ```ts
 * import { rateLimitHeaders } from "./_limits.ts";
 * rateLimitHeaders({ rateLimitResults: [{ name: "burst", limit: 100, windowMs: 60_000, remaining: 50, resetMs: 30_000, allowed: true }] }, false);
 * // [["RateLimit-Policy", '"burst";q=100;w=60'], ["RateLimit", '"burst";r=50;t=30']]
 * ```
 */
export function rateLimitHeaders(
  answers: Pick<ApiKeyContext, "rateLimitResults" | "creditResult" | "tenantCreditResult">,
  legacy: boolean,
): [string, string][] {
  const { rateLimitResults: results = [], creditResult, tenantCreditResult } = answers;
  const seconds = (ms: number) => Math.ceil(ms / 1000);
  // Below 0 when a counter holds more than this limit (a rotation lowered it): the fields are
  // non-negative Integers.
  const atLeast0 = (remaining: number) => Math.max(0, remaining);
  const headers: [string, string][] = [];
  if (results.length > 0) {
    headers.push(
      [
        RATE_LIMIT_POLICY_FIELD,
        results.map((r) => `"${r.name}";q=${r.limit};w=${seconds(r.windowMs)}`).join(", "),
      ],
      [
        RATE_LIMIT_FIELD,
        results.map((r) => `"${r.name}";r=${atLeast0(r.remaining)};t=${seconds(r.resetMs)}`)
          .join(", "),
      ],
    );
  }
  const denied = results.filter((r) => !r.allowed);
  // The one that refused, when costs differ: another may allow with fewer remaining.
  const longest = denied.length === 0
    ? undefined
    : denied.reduce((a, b) => (b.resetMs > a.resetMs ? b : a));
  if (legacy && results.length > 0) {
    const shown = longest ?? results.reduce((a, b) => (b.remaining < a.remaining ? b : a));
    headers.push(
      ["X-RateLimit-Limit", String(shown.limit)],
      ["X-RateLimit-Remaining", String(atLeast0(shown.remaining))],
      ["X-RateLimit-Reset", String(seconds(shown.resetMs))],
    );
  }
  // A request passes again once every refusing policy's window has room and each refusing balance
  // (the own balance's, the tenant pool's) has refilled: the latest of their waits, none when one
  // never comes (a cost over a policy's limit, a balance without a refill).
  const waits: number[] = [];
  if (longest !== undefined) {
    if (denied.some((r) => NEVER_FITS.has(r))) return headers;
    waits.push(longest.resetMs);
  }
  for (const c of [creditResult, tenantCreditResult]) {
    if (c === undefined || c.allowed) continue;
    if (c.resetMs < 0) return headers;
    waits.push(c.resetMs);
  }
  if (waits.length > 0) headers.push(["Retry-After", String(seconds(Math.max(...waits)))]);
  return headers;
}
