/**
 * The store contract: one call takes every counter of a request and applies
 * them atomically, all or nothing. Counters are a union by `kind`, so later
 * kinds (credits) join the same call without changing its shape.
 *
 * @module
 */

/**
 * A sliding-window counter: `cost` more units fit when the units accepted in
 * the last `windowMs` plus `cost` stay within `limit`.
 */
export interface WindowCounter {
  /** Counter kind. */
  readonly kind: "window";
  /**
   * Whose counter (an API key id, a tenant, an IP): 1–512 characters, no control
   * characters, no `{` or `}`, no lone surrogate.
   */
  readonly subject: string;
  /**
   * The group whose counters live together (a Redis Cluster hash tag; default
   * the subject): every counter of one check has the same. Part of the
   * counter's identity on Redis: give a subject always the same slot. A
   * subject's characters (see `subject`).
   */
  readonly slot?: string;
  /** Policy name (see `RateLimitPolicy.name`). */
  readonly name: string;
  /** Units per window. */
  readonly limit: number;
  /** Window length in ms. */
  readonly windowMs: number;
  /** Units this request counts (0 checks without consuming). */
  readonly cost: number;
}

/**
 * How a credit balance refills: at each boundary it is SET to `amount` (unused
 * credits do not carry over). `daily`/`monthly` boundaries are UTC midnights
 * (`monthly` on `day`, default 1, clamped to the month's last day); `everyMs`
 * boundaries are multiples of `everyMs` since the Unix epoch.
 */
export type CreditRefill =
  | {
    /** Balance after a refill. */
    readonly amount: number;
    /** Refill at UTC midnight every day, or on `day` of every month. */
    readonly interval: "daily" | "monthly";
    /** Day of the month (1–31; only with `monthly`). */
    readonly day?: number;
  }
  | {
    /** Balance after a refill. */
    readonly amount: number;
    /** Refill period in ms. */
    readonly everyMs: number;
  };

/** A credit balance: `cost` fits when the balance (after any refill due) is at least `cost`; a store holding none starts from `initial`. */
export interface CreditCounter {
  /** Counter kind. */
  readonly kind: "credit";
  /** Whose balance (as `WindowCounter.subject`). */
  readonly subject: string;
  /** As `WindowCounter.slot`. */
  readonly slot?: string;
  /** Balance name (a policy name). */
  readonly name: string;
  /** Credits this request spends (0 checks without spending). */
  readonly cost: number;
  /** Balance to start from when the store holds none (e.g. the last written-back one). */
  readonly initial: number;
  /** When `initial` was true, in ms since the epoch (default: now); refills since then apply. */
  readonly initialAt?: number;
  /** Refill rule (none: the balance only falls). */
  readonly refill?: CreditRefill;
}

/** Any counter a store checks. */
export type RateLimitCounter = WindowCounter | CreditCounter;

/**
 * A change of a credit balance: `set` replaces it, `add` adds (negative
 * subtracts); clamped to 0–`MAX_CREDITS`. `anchor` keeps it (the refill the
 * counter's rule owes taken first) and anchors it at the store's now: a check
 * passing another refill rule gets no refill before that rule's next boundary
 * after the change (a refill rule changed, the balance kept, in one step; a
 * store takes it only with `anchorsCredits`). `set` with `anchor` sets it and
 * anchors it so (a refill rule changed with a new balance, in one step).
 */
export type CreditChange =
  | { readonly set: number; readonly anchor?: true }
  | { readonly add: number }
  | { readonly anchor: true };

/** One counter's answer, in the order the counters were given. */
export interface CounterResult {
  /** Whether this counter's `cost` fits. */
  readonly allowed: boolean;
  /** Units left in the window, or credits left, after this check (consumed only when every counter fits). */
  readonly remaining: number;
  /**
   * Window: allowed, ms until `remaining` next grows (0 when nothing is counted);
   * denied, ms until this `cost` fits (`windowMs` when it exceeds `limit` and never
   * fits): a remote store's limiter refuses the same check again without it until
   * then (`refusalMemory`). Credit: ms until the next refill; -1 when there is
   * none, or when denied and no refill makes this `cost` fit.
   */
  readonly resetMs: number;
}

/**
 * A credit change's answer (`changeCredits`): the balance after it and, when
 * the store tells it, `before`, the balance it was applied to (the refill due
 * applied), from the same atomic step: a concurrent change never makes it
 * wrong. The memory, Redis and PostgreSQL stores answer it (PostgreSQL with
 * migration `0027_credit_change_balance_before`); a store without it leaves it out.
 */
export interface CreditChangeResult extends CounterResult {
  /** The balance the change was applied to. */
  readonly before?: number;
}

/**
 * A balance to write back (`drainCreditChanges`): credits left at `at` (ms
 * since the epoch, the store's clock). Give them back as the counter's
 * `initial` and `initialAt`.
 */
export interface CreditBalance {
  /** Whose balance. */
  readonly subject: string;
  /** Balance name. */
  readonly name: string;
  /** Credits left. */
  readonly remaining: number;
  /** When, on the store's clock. */
  readonly at: number;
}

/**
 * One check of a batch: its counters (applied all or nothing) and the last
 * moment it may still be applied.
 */
export interface StoreCheck {
  /** The check's counters; when any does not fit, none consumes. */
  readonly counters: readonly RateLimitCounter[];
  /**
   * Ms since the epoch on the CALLER's clock (`Date.now()`): a store that
   * reaches this check later must not apply it and answers `null` for it. A
   * remote store translates it to its server's clock (`createClockOffset`) and
   * compares it there, so a call that waited in a client queue or on a lock is
   * never applied after the limiter has answered. The limiter sets it a
   * margin before the moment it answers by its failure policy (half of
   * `timeoutMs`, at most 100 ms), so the reply of a check applied just before
   * its deadline still arrives in time.
   */
  readonly deadline: number;
}

/** What a store answers for a batch. */
export interface StoreBatchAnswer {
  /** Per check, in order: its counters' answers in order, or `null` when its deadline passed before it ran (nothing applied). */
  readonly results: readonly (readonly CounterResult[] | null)[];
}

/**
 * A counter store. `checkBatch` applies each check in one atomic step on the
 * store's own clock, in the order given; within a check, when any counter
 * does not fit, none consumes. It rejects (never resolves partially) when the
 * store cannot answer. The limiter is the only caller: it owns the deadline,
 * the failure policy and the metric (docs/rate-limits.md "One door").
 *
 * **How a store fails.** Every method rejects (or, `checkNow`, throws):
 * - with a `TypeError` for its own fault or a misconfiguration: a bug, a
 *   malformed reply from its server, a client never connected or of the wrong
 *   kind, a missing migration (the message names it). The limiter passes it
 *   to its caller (an error answer, 500), never to the failure policy;
 *   JavaScript's other programming errors (`RangeError`, `ReferenceError`,
 *   `SyntaxError`) count the same;
 * - with any other error when the store is unavailable (refused, reset,
 *   closed, its own timeout): the limiter applies its failure policy. A store
 *   over `fetch` wraps fetch's network `TypeError` in a plain `Error`.
 *
 * The limiter keeps at most a few calls in flight and bounds their waits: a
 * call that has not settled 2 s past its last answer frees its place, while
 * at most a few calls so freed are unsettled (a store needs no timer of its
 * own; a stall of any length leaves a bounded number of calls pending).
 */
export interface RateLimitStore {
  /** What the start-up line calls it (`memory`, `postgres`, `redis`). */
  readonly name?: string;
  /**
   * Whether one call may only touch one slot (Redis Cluster): the limiter then
   * sends one batch per slot (`WindowCounter.slot`, else the subject, of a
   * check's first counter).
   */
  readonly clustered?: boolean;
  /** Checks and applies each check of the batch in order; one round trip for the whole batch. */
  checkBatch(checks: readonly StoreCheck[]): Promise<StoreBatchAnswer>;
  /**
   * Capability of an in-process store: one check, synchronous (it throws where
   * `checkBatch` rejects). The limiter calls it instead, without a deadline timer.
   * `nowMs`, when given, is the caller's wall-clock time (ms since the epoch)
   * read for this check: a store on `Date.now()` may count at it instead of
   * reading the clock (the memory store does; one on another clock ignores it).
   */
  checkNow?(counters: readonly RateLimitCounter[], nowMs?: number): readonly CounterResult[];
  /**
   * Applies the refill due, then `change`, to `counter`'s balance in one atomic
   * step (its `cost` is ignored), unless `deadline` (as in `StoreCheck`) has
   * passed: then resolves `null` and changes nothing. Resolves to the balance,
   * ms to the next refill and, when it can tell it, the balance before.
   */
  changeCredits?(
    counter: CreditCounter,
    change: CreditChange,
    deadline: number,
  ): Promise<CreditChangeResult | null>;
  /**
   * Capability of a store whose `changeCredits` takes `{ anchor: true }` (the
   * memory, Redis and PostgreSQL stores; PostgreSQL with migration
   * `0025_credit_change_anchor`). Without it the limiter refuses that change
   * with a `TypeError`, never applying another in its place.
   */
  readonly anchorsCredits?: boolean;
  /**
   * Reads balances (the refill due counted, not written) without locking or
   * writing anything; `null` for a balance the store does not hold (the
   * limiter then answers its `initial` settled on `Date.now()`: a store on
   * another clock, such as the memory store's injected `now`, answers it
   * itself).
   */
  readCredits?(counters: readonly CreditCounter[]): Promise<readonly (CounterResult | null)[]>;
  /**
   * Capability of a store that holds balances the records do not (Redis): the
   * balances spent or changed since the last drain, read now, writing
   * nothing; a balance the store lost is left out. Draining clears what it
   * returns; a rejected drain keeps them for the next one. `deadline` (ms
   * since the epoch, the caller's clock) is when the limiter stops waiting. A
   * drain that read some balances and failed on others (a Redis Cluster's
   * hash tags on a node away) keeps the others and rejects with an error
   * whose `drained` lists the balances it read (cleared as returned ones are).
   * A balance changed (`changeCredits`) after a drain began is neither answered
   * by that drain nor put back when it fails: the change supersedes what it
   * read (the store drains the balance again as changed, or, anchored (its
   * rule changing), the change's caller writes it back).
   */
  drainCreditChanges?(deadline?: number): Promise<readonly CreditBalance[]>;
  /**
   * Checks the store once: rejects with a `TypeError` naming the mistake
   * (a client never connected or of the wrong kind, a missing migration) and
   * with any other error when the store is merely unreachable. What works but
   * should be fixed (a hardening migration missing) it reports to `warn` (the
   * limiter's logger; by default the store's own), once per store.
   */
  ready?(warn?: (line: string) => void): Promise<void>;
  /** Releases the store's own resources (never the client the caller passed in). */
  close?(): Promise<void> | void;
}

/** Most characters of a subject. */
export const MAX_SUBJECT_LENGTH = 512;
