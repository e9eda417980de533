/**
 * Credits on keys, the manage side: a key's credits on create and rotate,
 * reading and changing a balance in the limiter's store, and writing balances
 * back to the records (with a store that has `drainCreditChanges`, Redis:
 * every `persistIntervalMs` and on close, drained through the limiter's door;
 * with any store, a change whose write failed, at the same passes).
 *
 * @module
 */
import { ApiKeyValidationError } from "../errors.ts";
import {
  appliedAt,
  creditBalancesOf,
  creditCounterOf,
  creditPartsOf,
  creditSubjectOf,
  type HashedIds,
  hashedIdsOf,
  idOfSubject,
  nextRefillOf,
  storedRefill,
  type SubjectOwner,
} from "./_limits.ts";
import { logLine, type OutageReporter, type Redact, warnPerOutage } from "../_sinks.ts";
import { unref } from "../_unref.ts";
import { checkPersistInterval } from "../_options.ts";
import { assertKnownFields } from "../../telemetry/_known_fields.ts";
import type { StorageAccess } from "../storage/_access.ts";
import { newestPoolRecord, withPool } from "../storage/_answers.ts";
import type {
  ApiKeyCreditBalance,
  ApiKeyCreditChange,
  ApiKeyCredits,
  ApiKeyCreditsInput,
  ApiKeyPoolCredits,
  ApiKeyRecord,
} from "../types.ts";
import type {
  CounterResult,
  CreditBalance,
  CreditChange,
  CreditChangeResult,
  CreditRefill,
  Credits,
  RateLimitBalance,
  RateLimitCredits,
  RateLimiter,
} from "../../rate_limits/mod.ts";
// Not the barrel: `./api-keys/nest` would load the limiter, stores and throttler (issue 41).
import {
  compileCreditChange,
  compileCreditRefill,
  compileCredits,
  sameCreditRefill,
  settleCredits,
} from "../../rate_limits/credits.ts";

/** Default of `persistIntervalMs`. */
const DEFAULT_PERSIST_INTERVAL_MS = 10_000;
/** Most balances of one `readCredits` call. */
const MAX_READ = 500;
/**
 * A credit change's answer: the record it read in its turn (`null`: the
 * pool), the balance after it, the balance it was applied to when the store
 * tells it (`CreditChangeResult.before`), and the refill rule in force before
 * it (`null`: none).
 */
interface CreditsChanged {
  record: ApiKeyRecord | null;
  balance: ApiKeyCreditBalance;
  before: number | undefined;
  ruleBefore: CreditRefill | null;
}

/**
 * The balance a change reads in its turn (`#changed`): a key's own or the
 * pool, its stored copy, and how to write it back to every record spending it
 * (with rule `refill` when given; `null`: none).
 */
interface ChangeTarget {
  record: ApiKeyRecord | null;
  tenantId: string;
  subject: string;
  owner: SubjectOwner;
  stored: ApiKeyPoolCredits;
  write(remaining: number, at: Date, refill: CreditRefill | null | undefined): Promise<void>;
}

/**
 * A balance to write back, with whose it is: drained, or a change's whose
 * write failed, then with the rule it gave the balance (`refill`; `null`:
 * none; absent: the rule is not changed).
 */
interface PendingWrite {
  balance: CreditBalance;
  owner: SubjectOwner;
  refill?: CreditRefill | null;
}

/** A balance `#writeTenant` writes to a record: its own or its copy of the pool. */
interface BalanceWrite {
  which: "own" | "pool";
  remaining: number;
  at: Date;
}

/** The key whose own balance a record of `id` with `credits` spends (`undefined`: none). */
export function balanceKeyOf(credits: ApiKeyCredits, id: string): string | undefined {
  const own = creditPartsOf(credits).own;
  return own === undefined ? undefined : own.balanceKeyId ?? id;
}

/** The balance of a store's answer for a balance with `credits`' refill rule, read around `nowMs`. */
function balanceOf(credits: Credits, result: CounterResult, nowMs: number): ApiKeyCreditBalance {
  return { remaining: result.remaining, nextRefillAt: nextRefillOf(credits, result, nowMs) };
}

/** The stored balance of `credits` at `nowMs`, the refills due since `updatedAt` applied. */
function storedBalance(credits: Credits & { updatedAt: Date }, nowMs: number): ApiKeyCreditBalance {
  const { remaining, nextRefillAt } = settleCredits(credits, credits.updatedAt.getTime(), nowMs);
  return { remaining, nextRefillAt: nextRefillAt === null ? null : new Date(nextRefillAt) };
}

/** A key's balances now: its own and its tenant's pool (each `undefined` without). */
export interface KeyBalances {
  /** The key's own balance. */
  key?: ApiKeyCreditBalance;
  /** The tenant's shared pool. */
  tenant?: ApiKeyCreditBalance;
}

/**
 * Validates `create`/`rotate` credits (`ApiKeyCreditsInput`): the key's own
 * balance and the pool, each with `compileCredits`, no other field. A
 * `TypeError` names the field.
 */
function creditPartsOfInput(input: ApiKeyCreditsInput): { own?: Credits; pool?: Credits } {
  if (typeof input !== "object" || input === null) throw new TypeError("credits must be an object");
  // Input only: stored credits are not checked (another version's field is read past). The
  // pool's and each refill rule's unknown fields are `compileCredits`'s to refuse.
  assertKnownFields(input, ["remaining", "refill", "sharedBy", "pool"], "credits", "field");
  const { sharedBy, pool } = input;
  if (sharedBy !== undefined && sharedBy !== "tenant") {
    throw new TypeError('credits.sharedBy must be "tenant"');
  }
  if (sharedBy === "tenant") {
    if (pool !== undefined) {
      throw new TypeError('credits.pool cannot be given with sharedBy "tenant"');
    }
    return { pool: compileCredits({ remaining: input.remaining, refill: input.refill }) };
  }
  return {
    own: compileCredits({ remaining: input.remaining, refill: input.refill }),
    ...(pool === undefined ? {} : { pool: compileCreditsAs(pool, "credits.pool") }),
  };
}

/** `compileCredits` with its `TypeError` naming `label` in place of `credits`. */
function compileCreditsAs(input: Credits, label: string): Credits {
  try {
    return compileCredits(input);
  } catch (error) {
    throw new TypeError((error as Error).message.replace(/^credits/, label));
  }
}

/** The pool copy written back last among `records` (`undefined` when none spends a pool). */
function newestPool(records: readonly ApiKeyRecord[]): ApiKeyPoolCredits | undefined {
  const credits = newestPoolRecord(records)?.credits;
  const pool = credits && creditPartsOf(credits).pool;
  if (pool === undefined) return undefined;
  // A pool-only key's credits are the pool itself: its copy leaves their `sharedBy` out.
  const { sharedBy: _sharedBy, ...copy } = pool as ApiKeyPoolCredits & { sharedBy?: unknown };
  return copy;
}

/** The limiter's balance of tenant `tenantId`'s pool, from its copy `pool`. */
function poolBalance(tenantId: string, pool: ApiKeyPoolCredits): RateLimitBalance {
  return creditBalancesOf("", tenantId, { ...pool, sharedBy: "tenant" })[0];
}

/**
 * Validates an `updateCredits` change: `{ set }`/`{ add }` with
 * `compileCreditChange`, a rule with `compileCreditRefill` (`null`: none)
 * with the `set` the new rule starts from, or alone (the balance kept);
 * returns a copy with only those fields. Throws a `TypeError` naming the
 * field, an unknown one too.
 *
 * @example
 * ```ts
 * import { compileKeyCreditChange } from "./_credits.ts";
 * compileKeyCreditChange({ set: 100, refill: { amount: 100, interval: "daily" } });
 * compileKeyCreditChange({ refill: { amount: 100, interval: "daily" } });
 * ```
 */
export function compileKeyCreditChange(change: ApiKeyCreditChange): ApiKeyCreditChange {
  const c = change as Record<string, unknown>;
  if (typeof c === "object" && c !== null && "anchor" in c) {
    throw new TypeError("anchor is a store's change: give { refill } to keep the balance");
  }
  if (typeof c === "object" && c !== null) {
    assertKnownFields(c, ["set", "add", "refill"], "credit change", "field");
  }
  if (typeof c !== "object" || c === null || !("refill" in c)) {
    return compileCreditChange(change as CreditChange) as ApiKeyCreditChange;
  }
  if ("add" in c) {
    throw new TypeError("add cannot be given with refill: give set, or add in a change of its own");
  }
  if (c.refill === undefined) throw new TypeError("refill must be a rule or null");
  const refill = c.refill === null ? null : compileCreditRefill(c.refill, "refill")!;
  // Without set, the balance is kept in one store step too (`#apply`: `{ anchor: true }`).
  if (!("set" in c)) return { refill };
  return { ...compileCreditChange({ set: c.set as number }), refill };
}

/** `credits` with refill rule `refill` (`null`: none; `undefined`: as it is). */
function withRule<T extends Credits>(credits: T, refill: CreditRefill | null | undefined): T {
  if (refill === undefined) return credits;
  const { refill: _, ...rest } = credits;
  return (refill === null ? rest : { ...rest, refill }) as T;
}

/** The new refill rule of `change` (`null`: none; `undefined`: the rule is kept). */
function ruleOf(change: ApiKeyCreditChange): CreditRefill | null | undefined {
  return "refill" in change ? change.refill : undefined;
}

/**
 * Same refill rule, as read (`storedRefill`: a field of another version read
 * past), however written (`sameCreditRefill`: monthly with `day: 1` as without
 * it, `everyMs` of a day as `daily`).
 */
function sameRefill(a: Credits, b: Credits): boolean {
  return sameCreditRefill(storedRefill(a.refill), storedRefill(b.refill));
}

/** Whether copy `a` of a balance was written after copy `b`. */
function newer(a: Credits & { updatedAt: Date }, b: Credits & { updatedAt: Date }): boolean {
  return a.updatedAt.getTime() > b.updatedAt.getTime();
}

/**
 * Credits of a service: built from the options `limiter` and
 * `persistIntervalMs` (a `TypeError` naming a bad one after `label`).
 * `rewritten` hears the prefix of each record whose credits it wrote (the
 * service drops its cached copy and tells the fleet), so a store that lost a
 * balance reloads the last written-back one, not a cached older one.
 */
export class CreditBook {
  readonly #rewritten: (prefix: string) => void;
  readonly #storage: StorageAccess;
  readonly #limiter: RateLimiter | undefined;
  readonly #clock: () => Date;
  readonly #drain: (() => Promise<readonly CreditBalance[]>) | undefined;
  readonly #intervalMs: number;
  /** Balances not yet written (drained, or a change's whose write failed), by subject. */
  readonly #pending = new Map<string, PendingWrite>();
  /** The ids of hashed subjects the limiter's store may drain (`undefined`: it does not drain). */
  readonly #hashed: HashedIds | undefined;
  /** Drained balances of hashed subjects whose ids were not noted, since the last failure reported. */
  #unknownCount = 0;
  readonly #writeFailed: OutageReporter;
  readonly #joinFailed: OutageReporter;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  /** The last write-back pass or credit change queued (settled: never rejects). */
  #turn: Promise<unknown> = Promise.resolve();

  /** See the class documentation. */
  constructor(
    storage: StorageAccess,
    limiter: RateLimiter | undefined,
    persistIntervalMs: unknown,
    clock: () => Date,
    label: string,
    rewritten: (prefix: string) => void = () => {},
    redact?: Redact,
  ) {
    this.#writeFailed = warnPerOutage("credits write-back", redact);
    this.#joinFailed = warnPerOutage("credits join", redact);
    this.#rewritten = rewritten;
    checkPersistInterval(persistIntervalMs, limiter !== undefined, label);
    this.#storage = storage;
    this.#limiter = limiter;
    this.#clock = clock;
    this.#intervalMs = (persistIntervalMs as number | undefined) ?? DEFAULT_PERSIST_INTERVAL_MS;
    this.#hashed = hashedIdsOf(limiter);
    const drain = limiter?.drainCreditChanges;
    this.#drain = drain !== undefined && storage.setCredits !== undefined
      ? () => drain.call(limiter)
      : undefined;
    this.#arm();
  }

  /**
   * A new key's credits of tenant `tenantId` from `input` at `now`
   * (`undefined` without them): its own balance and the tenant's pool. A pool
   * the tenant already has keeps its refill rule (`ApiKeyValidationError` on
   * `credits` for another) and its balance, read now without writing. Throws
   * a `TypeError` naming the field, or without the storage capability
   * `storesCredits` or a `limiter`.
   */
  async compile(
    input: ApiKeyCreditsInput | undefined,
    tenantId: string,
    now: Date,
  ): Promise<ApiKeyCredits | undefined> {
    if (input === undefined) return undefined;
    const { own, pool } = creditPartsOfInput(input);
    if (this.#storage.setCredits === undefined) {
      throw new TypeError("credits need a storage with the storesCredits capability");
    }
    if (this.#limiter === undefined) throw new TypeError("credits need the service's limiter");
    let shared: ApiKeyPoolCredits | undefined;
    if (pool !== undefined) {
      const tenant = await this.#tenantPool(tenantId);
      if (tenant !== undefined && !sameRefill(tenant, pool)) {
        throw new ApiKeyValidationError(
          "credits",
          "the tenant's shared credits must keep the refill rule its other keys spend with " +
            "(change the pool's rule with updateCredits(tenantId, null, { set, refill }))",
        );
      }
      shared = tenant === undefined
        ? { ...pool, updatedAt: now }
        : await this.#readPool(tenantId, tenant, now);
    }
    if (own === undefined) return { ...shared!, sharedBy: "tenant" };
    return { ...own, updatedAt: now, ...(shared === undefined ? {} : { pool: shared }) };
  }

  /**
   * The credits a rotation's new key (or a key minted with `limitsOf`) takes
   * from `old`: the same balance (`balanceKeyId`) and the same pool, read now
   * from the limiter's store without writing (the stored ones when the store fails).
   */
  async inherit(old: ApiKeyRecord, now: Date): Promise<ApiKeyCredits | undefined> {
    const credits = old.credits;
    if (credits === undefined) return undefined;
    const { own } = creditPartsOf(credits);
    const shared: ApiKeyCredits = own === undefined
      ? credits
      : { ...credits, balanceKeyId: own.balanceKeyId ?? old.id };
    try {
      const read = await this.#limiter!.readCredits(this.#balances(old));
      const nowMs = now.getTime();
      // Each as of the moment the store read it (in its refill period, whatever this clock says).
      const first = { remaining: read[0].remaining, updatedAt: appliedAt(credits, read[0], nowMs) };
      return own === undefined ? { ...credits, ...first } : {
        ...shared,
        ...first,
        ...(credits.pool === undefined ? {} : {
          pool: {
            ...credits.pool,
            remaining: read[1].remaining,
            updatedAt: appliedAt(credits.pool, read[1], nowMs),
          },
        }),
      };
    } catch {
      return shared;
    }
  }

  /**
   * The balances of each record now, for its summary: its own and its
   * tenant's pool (read once per tenant), read from the limiter's store
   * (`readCredits`, 500 a call, nothing written), the stored ones when the
   * store fails; none without credits or a limiter.
   */
  async balances(records: readonly ApiKeyRecord[]): Promise<KeyBalances[]> {
    const limiter = this.#limiter;
    const answers: KeyBalances[] = records.map(() => ({}));
    if (limiter === undefined) return answers;
    const nowMs = this.#clock().getTime();
    // Each balance once: a key's own (by record), a tenant's pool (by tenant, its newest copy).
    const reads: {
      balance: RateLimitBalance;
      stored: Credits & { updatedAt: Date };
      at: number[];
      owner: keyof KeyBalances;
    }[] = [];
    const pooled = new Map<string, number[]>();
    records.forEach((record, i) => {
      if (record.credits === undefined) return;
      const { own, pool } = creditPartsOf(record.credits);
      if (own !== undefined) {
        const [balance] = creditBalancesOf(record.id, record.tenantId, own);
        reads.push({ balance, stored: own, at: [i], owner: "key" });
      }
      if (pool !== undefined) {
        pooled.set(record.tenantId, [...pooled.get(record.tenantId) ?? [], i]);
      }
    });
    for (const [tenantId, at] of pooled) {
      const stored = newestPool(at.map((i) => records[i]))!;
      reads.push({ balance: poolBalance(tenantId, stored), stored, at, owner: "tenant" });
    }
    for (let start = 0; start < reads.length; start += MAX_READ) {
      const chunk = reads.slice(start, start + MAX_READ);
      let answered: readonly CounterResult[] | undefined;
      try {
        answered = await limiter.readCredits(chunk.map((read) => read.balance));
      } catch {
        // the store failed or cannot read: the stored balances
      }
      chunk.forEach((read, j) => {
        const balance = answered === undefined
          ? storedBalance(read.stored, nowMs)
          : balanceOf(read.stored, answered[j], nowMs);
        for (const i of read.at) answers[i][read.owner] = balance;
      });
    }
    return answers;
  }

  /**
   * `balances` of records of one tenant as a list of its whole tenant gives
   * them: each one's pool read from the tenant's newest copy (one lookup;
   * the stored balance when the store fails), not from the record's own.
   */
  async keyBalances(tenantId: string, records: readonly ApiKeyRecord[]): Promise<KeyBalances[]> {
    const pools = records.map((record) => record.credits && creditPartsOf(record.credits).pool);
    const pooled = this.#limiter !== undefined && pools.some((pool) => pool !== undefined);
    const newest = pooled ? await this.#tenantPool(tenantId) : undefined;
    if (newest === undefined) return await this.balances(records);
    return await this.balances(
      records.map((record, i) =>
        pools[i] === undefined || pools[i] === newest
          ? record
          : { ...record, credits: withPool(record.credits!, newest) }
      ),
    );
  }

  /**
   * Applies a validated `change` (`compileKeyCreditChange`) to the own
   * balance of the record `read` answers (read in the change's turn) through
   * the limiter (its `timeoutMs` the deadline; see `requireLimiter`; a rule
   * change see `#apply`) and writes the result back to every record spending
   * it (a new rule to each of them: its rotation chain's and the keys minted
   * with `limitsOf`), in turn with the write-back passes (see `#changed`).
   * `ApiKeyValidationError` on `credits` for a key without a balance of its
   * own; rejects when `read` or the store fails.
   */
  async update(
    read: () => Promise<ApiKeyRecord>,
    change: ApiKeyCreditChange,
  ): Promise<CreditsChanged> {
    return await this.#changed(change, async () => {
      const record = await read();
      const own = record.credits && creditPartsOf(record.credits).own;
      if (own === undefined) {
        throw new ApiKeyValidationError("credits", "the key has no balance of its own");
      }
      const { tenantId } = record;
      const balanceKeyId = own.balanceKeyId ?? record.id;
      return {
        record,
        tenantId,
        subject: creditSubjectOf(record.id, own),
        owner: { kind: "key", id: balanceKeyId },
        stored: own,
        write: (remaining, at, refill) =>
          this.#writeBackOwn(tenantId, balanceKeyId, remaining, at, refill, true),
      };
    });
  }

  /**
   * `update` of tenant `tenantId`'s shared pool (its newest copy read in the
   * change's turn), written back to every key of the tenant spending it.
   * `ApiKeyValidationError` on `credits` when no key of the tenant spends a pool.
   */
  async updatePool(tenantId: string, change: ApiKeyCreditChange): Promise<CreditsChanged> {
    return await this.#changed(change, async () => {
      const pool = await this.#tenantPool(tenantId);
      if (pool === undefined) {
        throw new ApiKeyValidationError("credits", "no key of the tenant spends shared credits");
      }
      return {
        record: null,
        tenantId,
        subject: poolBalance(tenantId, pool).subject,
        owner: { kind: "tenant", id: tenantId },
        stored: pool,
        write: (remaining, at, refill) =>
          this.#writeBackPool(tenantId, remaining, at, refill, true),
      };
    });
  }

  /**
   * Applies `change` to balance `subject` in the limiter's store, one atomic
   * step: `{ set }` or `{ add }` with its rule (`counter`); a new rule as
   * `{ set, anchor: true }` (with `set`) or `{ anchor: true }` (without)
   * under the old rule, answered with `ruled`'s next refill. The old rule's
   * refill due is taken (the balance before is the old rule's), and the
   * balance is set or kept as of the change: the new rule's first refill is
   * its next boundary after it, and a check still passing the old rule (a
   * context cached elsewhere) gets none by an old boundary crossed before it.
   * Never two store calls: a spend checked between them would be overwritten.
   */
  async #apply(
    subject: string,
    counter: RateLimitCredits,
    ruled: RateLimitCredits,
    change: ApiKeyCreditChange,
  ): Promise<CreditChangeResult> {
    const limiter = this.#limiter!;
    if (!("refill" in change)) return await limiter.changeCredits(subject, counter, change);
    const now = this.#clock().getTime();
    const anchored = await limiter.changeCredits(
      subject,
      counter,
      change.set === undefined ? { anchor: true } : { set: change.set, anchor: true },
    );
    // The store's moment under the old rule, then the new rule's next refill from it.
    const at = appliedAt({ remaining: 0, ...counter }, anchored, now).getTime();
    const { nextRefillAt } = settleCredits({ remaining: 0, ...ruled }, at, at);
    return { ...anchored, resetMs: nextRefillAt === null ? -1 : nextRefillAt - at };
  }

  /**
   * A change of the balance `read` reads in turn (`#apply`), written back
   * (`write`) as of the moment the store applied it (`appliedAt`). In turn:
   * after every write-back pass and change queued before it and before every
   * one after, so it reads the rule a change before it wrote (its own turn's
   * read, never one made before) and a balance a pass drained before the
   * change never lands over it (nor does one kept from a failed write: it is
   * dropped once the change is written). A write that fails once the store
   * applied the change neither undoes it nor rejects: the balance is kept for
   * the next pass with its rule (the rule in force for the changes after it,
   * which write it too), and the failure is logged as a pass's. Across
   * instances, another's write-back in flight may still land over it, until
   * this instance's next pass writes it again.
   */
  #changed(change: ApiKeyCreditChange, read: () => Promise<ChangeTarget>): Promise<CreditsChanged> {
    return this.#inTurn(async () => {
      const { record, tenantId, subject, owner, stored, write } = await read();
      const kept = this.#pending.get(subject)?.refill;
      const credits = withRule(stored, kept);
      const rule = ruleOf(change);
      const ruled = withRule(credits, rule);
      const refill = rule === undefined ? kept : rule;
      const now = this.#clock().getTime();
      if (subject[owner.kind.length] === "#") this.#hashed?.note(subject, owner);
      const result = await this.#apply(
        subject,
        creditCounterOf(credits, tenantId),
        creditCounterOf(ruled, tenantId),
        change,
      );
      const at = appliedAt(ruled, result, now);
      try {
        await write(result.remaining, at, refill);
        this.#pending.delete(subject);
      } catch (error) {
        const balance = { subject, name: "credits", remaining: result.remaining, at: +at };
        this.#pending.set(subject, { balance, owner, ...(refill === undefined ? {} : { refill }) });
        this.#writeFailed.failed(error);
        this.#arm();
      }
      return {
        record,
        balance: balanceOf(ruled, result, now),
        before: result.before,
        ruleBefore: storedRefill(credits.refill) ?? null,
      };
    });
  }

  /**
   * The balance of tenant `tenantId`'s shared pool now, with its refill rule
   * (read without writing; the stored one when the store fails); `null` when
   * no key of the tenant spends a pool or without a limiter.
   */
  async poolOf(
    tenantId: string,
  ): Promise<(ApiKeyCreditBalance & Pick<Credits, "refill">) | null> {
    if (this.#limiter === undefined) return null;
    const pool = await this.#tenantPool(tenantId);
    if (pool === undefined) return null;
    const balance = await this.#readPool(tenantId, pool, this.#clock());
    const nowMs = this.#clock().getTime();
    return {
      ...storedBalance(balance, nowMs),
      ...(pool.refill === undefined ? {} : { refill: storedRefill(pool.refill) }),
    };
  }

  /**
   * The newest pool copy among tenant `tenantId`'s keys (`undefined` when
   * none spends one): one lookup with the storage's `findTenantPool`, else
   * from every key of the tenant.
   */
  async #tenantPool(tenantId: string): Promise<ApiKeyPoolCredits | undefined> {
    const find = this.#storage.findTenantPool;
    if (find === undefined) return newestPool(await this.#storage.listByTenant(tenantId, true));
    return newestPool([await find(tenantId)].filter((record) => record !== null));
  }

  /** `pool` with its balance read now from the limiter's store (the stored one when it fails). */
  async #readPool(
    tenantId: string,
    pool: ApiKeyPoolCredits,
    now: Date,
  ): Promise<ApiKeyPoolCredits> {
    try {
      const [read] = await this.#limiter!.readCredits([poolBalance(tenantId, pool)]);
      return {
        ...pool,
        remaining: read.remaining,
        updatedAt: appliedAt(pool, read, now.getTime()),
      };
    } catch {
      return pool;
    }
  }

  /** Throws a `TypeError` unless the service has a limiter (checked before any read). */
  requireLimiter(): void {
    if (this.#limiter === undefined) {
      throw new TypeError("updateCredits needs the service's limiter");
    }
  }

  /**
   * Drains the store's changed balances and writes each back (a failed one is
   * kept for the next pass); resolves the first failure, if any. Passes and
   * credit changes run one at a time, so an older balance never lands after a
   * newer one.
   */
  #flush(): Promise<unknown> {
    return this.#inTurn(() => this.#flushOnce());
  }

  /** `step` once every write-back pass and credit change queued before it has settled. */
  #inTurn<T>(step: () => Promise<T>): Promise<T> {
    const turn = this.#turn.then(step);
    this.#turn = turn.catch(() => undefined);
    return turn;
  }

  async #flushOnce(): Promise<unknown> {
    let failure: unknown;
    if (this.#drain !== undefined) {
      const pass = this.#hashed?.startPass();
      // A drain answered late hands its balances to a later drain: their subjects stay noted.
      const pending = this.#limiter?.drainPending?.() === true;
      try {
        this.#take(await this.#drain());
        if (pass !== undefined && !pending) this.#hashed!.drained(pass);
      } catch (error) {
        failure = error;
        // A partial drain (a Redis Cluster's tags on a node away): what it read is written now.
        const read = (error as { drained?: unknown } | null)?.drained;
        if (Array.isArray(read)) this.#take(read);
      }
    }
    failure ??= this.#unknown();
    /** Keys' own balances, by balance key. */
    const own = new Map<
      string,
      { subject: string; write: BalanceWrite; refill: CreditRefill | null | undefined }
    >();
    for (const [subject, { balance, owner, refill }] of [...this.#pending]) {
      const { remaining } = balance;
      const at = new Date(balance.at);
      if (owner.kind === "key") {
        own.set(owner.id, { subject, write: { which: "own", remaining, at }, refill });
        continue;
      }
      try {
        await this.#writeBackPool(owner.id, remaining, at, refill);
        this.#pending.delete(subject);
      } catch (error) {
        failure ??= error;
      }
    }
    // A balance key's record tells its tenant; the tenant's keys are then written with every
    // balance drained that they spend (a balance is spent by its key's rotation chain and the
    // keys minted with `limitsOf`): one read per tenant, not one per balance.
    const failedTenants = new Set<string>();
    let gone = 0;
    for (const [id, { subject, write, refill }] of own) {
      if (!this.#pending.has(subject)) continue; // written with its tenant's
      let tenantId: string | undefined;
      try {
        tenantId = (await this.#storage.findById(id))?.tenantId;
      } catch (error) {
        failure ??= error;
        continue;
      }
      if (tenantId === undefined) {
        gone++;
        this.#pending.delete(subject); // no record spends it any more
        continue;
      }
      if (failedTenants.has(tenantId)) continue; // kept for the next pass
      const written = new Set([id]);
      try {
        if (refill !== undefined) {
          await this.#writeBackOwn(tenantId, id, write.remaining, write.at, refill);
        } else {
          await this.#writeTenant(tenantId, undefined, (credits, keyId) => {
            const balanceKeyId = balanceKeyOf(credits, keyId);
            const drained = balanceKeyId === undefined ? undefined : own.get(balanceKeyId);
            // A balance with a rule to write is written with it, on its own.
            if (drained === undefined || drained.refill !== undefined) return undefined;
            if (balanceKeyId === keyId) written.add(keyId); // the balance key is this tenant's
            return drained.write;
          });
        }
      } catch (error) {
        failure ??= error;
        failedTenants.add(tenantId);
        continue;
      }
      for (const keyId of written) this.#pending.delete(own.get(keyId)!.subject);
    }
    if (gone > 0) {
      logLine(
        (line) => console.warn(line),
        `api-keys: credits write-back: ${gone} drained balance(s) of keys no longer stored ` +
          "were not written back",
      );
    }
    return failure;
  }

  /**
   * Keeps the drained `balances` named `credits` with whose they are, mapped now (a subject of
   * another owner is not the service's); one of a hashed subject not noted is counted, to fail the pass.
   */
  #take(balances: readonly CreditBalance[]): void {
    for (const balance of balances) {
      if (balance.name !== "credits") continue;
      const owner = idOfSubject(balance.subject, this.#hashed);
      if (owner === null) this.#unknownCount++;
      else if (owner !== undefined) {
        // A rule a failed change write kept stays with the balance drained after it.
        const refill = this.#pending.get(balance.subject)?.refill;
        this.#pending.set(balance.subject, {
          balance,
          owner,
          ...(refill === undefined ? {} : { refill }),
        });
      }
    }
  }

  /** The error of the drained balances `#take` could not map (`undefined`: none). */
  #unknown(): Error | undefined {
    const n = this.#unknownCount;
    if (n === 0) return undefined;
    this.#unknownCount = 0;
    return new Error(
      `${n} drained balance(s) of a hashed (long) key or tenant id this service did not spend ` +
        "are not written back",
    );
  }

  /** Stops the write-back timer and writes back once more; rejects with the first failure. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    const failure = await this.#flush();
    if (failure !== undefined) throw failure;
  }

  /**
   * Arms the next write-back pass, in `persistIntervalMs`: always with a
   * draining store, else while a change's failed write is kept.
   */
  #arm(): void {
    if (this.#closed || this.#timer !== undefined) return;
    if (this.#drain === undefined && this.#pending.size === 0) return;
    const timer = setTimeout(async () => {
      this.#timer = undefined;
      let failure: unknown;
      try {
        failure = await this.#flush();
      } catch (error) {
        failure = error; // a bug: a failed pass all the same, the next one still armed
      }
      if (failure === undefined) this.#writeFailed.succeeded();
      else this.#writeFailed.failed(failure);
      this.#arm();
    }, this.#intervalMs);
    unref(timer);
    this.#timer = timer;
  }

  /** The limiter's balances of `record` (which has credits): its own, then its tenant's pool. */
  #balances(record: ApiKeyRecord): RateLimitBalance[] {
    return creditBalancesOf(record.id, record.tenantId, record.credits!);
  }

  /**
   * Writes key `balanceKeyId`'s own balance `remaining` at `at` (and refill
   * rule `refill` when given; `null`: none) to every key of tenant `tenantId`
   * spending it: a minted key is on no rotation chain. `again`: a change's,
   * its keys read again once written (see `#writeTenant`).
   */
  async #writeBackOwn(
    tenantId: string,
    balanceKeyId: string,
    remaining: number,
    at: Date,
    refill?: CreditRefill | null,
    again = false,
  ): Promise<void> {
    await this.#writeTenant(
      tenantId,
      refill,
      (credits, id) =>
        balanceKeyOf(credits, id) === balanceKeyId ? { which: "own", remaining, at } : undefined,
      again,
    );
  }

  /**
   * Writes the pool's `remaining` at `at` (and refill rule `refill` when
   * given; `null`: none) to every key of tenant `tenantId` spending it: a
   * balance in one step with the storage's `setTenantPool` (one statement: a key
   * stored meanwhile is either written by it or takes the newer copy when it
   * joins), else (and a rule always) read from every key of the tenant and
   * written one by one. `again`: a change's, its keys read again once written
   * (see `#writeTenant`).
   */
  async #writeBackPool(
    tenantId: string,
    remaining: number,
    at: Date,
    refill?: CreditRefill | null,
    again = false,
  ): Promise<void> {
    const setCredits = this.#storage.setCredits;
    if (setCredits === undefined) return;
    const setTenantPool = this.#storage.setTenantPool;
    const write = (credits: ApiKeyCredits): BalanceWrite | undefined =>
      creditPartsOf(credits).pool === undefined ? undefined : { which: "pool", remaining, at };
    if (setTenantPool !== undefined && refill === undefined) {
      for (const prefix of await setTenantPool(tenantId, remaining, at)) this.#rewritten(prefix);
      return;
    }
    await this.#writeTenant(tenantId, refill, write, again);
  }

  /**
   * Writes the balance `write` names for each record of tenant `tenantId` (its
   * `"own"` or its `"pool"` copy, `remaining` at `at`; `undefined`: none), and
   * refill rule `refill` when given (`null`: none), read from every key of the
   * tenant and written one by one (each `rewritten`). With a rule or
   * `again` (a change's), the tenant's keys are read again once written, and
   * a record spending the balance under another rule or with an older copy is
   * written too: a key that joined it meanwhile (its copy read before the
   * change, stored after the first read; `CreditBook.joined` covers one stored
   * before it).
   */
  async #writeTenant(
    tenantId: string,
    refill: CreditRefill | null | undefined,
    write: (credits: ApiKeyCredits, id: string) => BalanceWrite | undefined,
    again = false,
  ): Promise<void> {
    const setCredits = this.#storage.setCredits;
    if (setCredits === undefined) return;
    for (let pass = 0; pass < (refill === undefined && !again ? 1 : 2); pass++) {
      for (const record of await this.#storage.listByTenant(tenantId, true)) {
        const credits = record.credits;
        const written = credits && write(credits, record.id);
        if (written === undefined) continue;
        const { which, remaining, at } = written;
        const part = which === "own" ? credits! : creditPartsOf(credits!).pool!;
        const ruled = withRule(part, refill);
        if (pass === 1 && sameRefill(part, ruled) && part.updatedAt.getTime() >= at.getTime()) {
          continue;
        }
        const balance = { ...ruled, remaining, updatedAt: at };
        await setCredits(record.id, which === "own" ? balance : withPool(credits!, balance));
        this.#rewritten(record.prefix);
      }
    }
  }

  /**
   * A new `record` (created or rotated) once stored: a balance it shares
   * that a change wrote while it was made (its copy read before the change,
   * stored after: a new refill rule, or a newer balance such as a top-up) is
   * copied from the balance's newest record (the pool's newest copy; the first
   * key of its own balance's), so it never spends by the old rule and a store
   * reloading the balance from it keeps the change. Never rejects: a storage failure is logged once
   * per outage and resolved (`undefined`: none), the key being stored (its
   * secret must be handed out); the balance's next rule change writes it.
   */
  async joined(record: ApiKeyRecord): Promise<unknown> {
    try {
      await this.#join(record);
      this.#joinFailed.succeeded();
      return undefined;
    } catch (error) {
      this.#joinFailed.failed(error);
      return error;
    }
  }

  /** `joined`, rejecting when the storage fails. */
  async #join(record: ApiKeyRecord): Promise<void> {
    const setCredits = this.#storage.setCredits;
    if (record.credits === undefined || setCredits === undefined) return;
    const { own, pool } = creditPartsOf(record.credits);
    let written = record.credits;
    const newest = pool && await this.#tenantPool(record.tenantId);
    if (newest !== undefined && (!sameRefill(newest, pool!) || newer(newest, pool!))) {
      written = withPool(written, newest);
    }
    const first = own?.balanceKeyId === undefined
      ? null
      : await this.#storage.findById(own.balanceKeyId);
    const kept = first?.tenantId === record.tenantId
      ? first.credits && creditPartsOf(first.credits).own
      : undefined;
    if (
      kept !== undefined && kept.balanceKeyId === undefined &&
      (!sameRefill(kept, own!) || newer(kept, own!))
    ) {
      const { remaining, updatedAt } = kept;
      written = withRule({ ...written, remaining, updatedAt }, kept.refill ?? null);
    }
    if (written === record.credits) return;
    await setCredits(record.id, written);
    this.#rewritten(record.prefix);
  }
}
