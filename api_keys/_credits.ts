/**
 * Credits on keys, the manage side: a key's credits on create and rotate,
 * reading and changing a balance in the limiter's store, and writing balances
 * back to the records (with a store that has `drainCreditChanges`, Redis:
 * every `persistIntervalMs` and on close, drained through the limiter's door).
 *
 * @module
 */
import { ApiKeyValidationError } from "./errors.ts";
import { creditCounterOf, creditSubjectOf, keyIdOfSubject } from "./_limits.ts";
import { warnOnce } from "./_sinks.ts";
import type { StorageAccess } from "./storage/_access.ts";
import type { ApiKeyCreditBalance, ApiKeyCredits, ApiKeyRecord } from "./types.ts";
import {
  compileCredits,
  type CounterResult,
  type CreditBalance,
  type CreditChange,
  type Credits,
  type RateLimitBalance,
  type RateLimiter,
} from "../rate_limits/mod.ts";
import { creditPeriod, refillParams } from "../rate_limits/_refill.ts";

/** Default of `persistIntervalMs`. */
const DEFAULT_PERSIST_INTERVAL_MS = 10_000;
/** Most balances of one `readCredits` call. */
const MAX_READ = 500;
/** Most records of one rotation chain a write-back follows. */
const MAX_CHAIN = 100;

/** The balance of a store's answer at `nowMs`. */
function balanceOf(result: CounterResult, nowMs: number): ApiKeyCreditBalance {
  return {
    remaining: result.remaining,
    nextRefillAt: result.resetMs < 0 ? null : new Date(nowMs + result.resetMs),
  };
}

/** The stored balance of `credits` at `nowMs`, the refills due since `updatedAt` applied. */
function storedBalance(credits: ApiKeyCredits, nowMs: number): ApiKeyCreditBalance {
  const [amount, every, day] = refillParams(credits.refill);
  const [start, next] = creditPeriod(nowMs, every, day);
  const refilled = next >= 0 && start > credits.updatedAt.getTime();
  return {
    remaining: refilled ? amount : credits.remaining,
    nextRefillAt: next < 0 ? null : new Date(next),
  };
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
  /** Drained balances not yet written, by subject. */
  readonly #pending = new Map<string, CreditBalance>();
  readonly #writeFailed = warnOnce("credits write-back");
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  #flushing: Promise<unknown> = Promise.resolve();

  /** See the class documentation. */
  constructor(
    storage: StorageAccess,
    limiter: RateLimiter | undefined,
    persistIntervalMs: unknown,
    clock: () => Date,
    label: string,
    rewritten: (prefix: string) => void = () => {},
  ) {
    this.#rewritten = rewritten;
    if (persistIntervalMs !== undefined) {
      if (limiter === undefined) throw new TypeError(`${label}persistIntervalMs needs a limiter`);
      if (
        !Number.isSafeInteger(persistIntervalMs) || (persistIntervalMs as number) < 100 ||
        (persistIntervalMs as number) > 3_600_000
      ) {
        throw new TypeError(`${label}persistIntervalMs must be a whole number from 100 to 3600000`);
      }
    }
    this.#storage = storage;
    this.#limiter = limiter;
    this.#clock = clock;
    this.#intervalMs = (persistIntervalMs as number | undefined) ?? DEFAULT_PERSIST_INTERVAL_MS;
    const drain = limiter?.drainCreditChanges;
    this.#drain = drain !== undefined && storage.setCredits !== undefined
      ? () => drain.call(limiter)
      : undefined;
    this.#arm();
  }

  /**
   * A new key's credits from `input` at `now` (`undefined` without them).
   * Throws a `TypeError` naming the field, or without the storage capability
   * `storesCredits` or a `limiter`.
   */
  compile(input: Credits | undefined, now: Date): ApiKeyCredits | undefined {
    if (input === undefined) return undefined;
    const valid = compileCredits(input);
    if (this.#storage.setCredits === undefined) {
      throw new TypeError("credits need a storage with the storesCredits capability");
    }
    if (this.#limiter === undefined) throw new TypeError("credits need the service's limiter");
    return { ...valid, updatedAt: now };
  }

  /**
   * The credits a rotation's new key takes from `old`: the same balance
   * (`balanceKeyId`), read now from the limiter's store without writing (the
   * stored one when the store fails).
   */
  async inherit(old: ApiKeyRecord, now: Date): Promise<ApiKeyCredits | undefined> {
    const credits = old.credits;
    if (credits === undefined) return undefined;
    const shared = { ...credits, balanceKeyId: credits.balanceKeyId ?? old.id };
    try {
      const [read] = await this.#limiter!.readCredits([this.#balance(old)]);
      return { ...shared, remaining: read.remaining, updatedAt: now };
    } catch {
      return shared;
    }
  }

  /**
   * The balance of each record now, for its summary: read from the limiter's
   * store (`readCredits`, 500 a call, nothing written), the stored one when
   * the store fails; `undefined` without credits or a limiter.
   */
  async balances(records: readonly ApiKeyRecord[]): Promise<(ApiKeyCreditBalance | undefined)[]> {
    const limiter = this.#limiter;
    const answers: (ApiKeyCreditBalance | undefined)[] = records.map(() => undefined);
    if (limiter === undefined) return answers;
    const funded = records.flatMap((record, i) => record.credits === undefined ? [] : [i]);
    const nowMs = this.#clock().getTime();
    for (let start = 0; start < funded.length; start += MAX_READ) {
      const chunk = funded.slice(start, start + MAX_READ);
      let read: readonly CounterResult[] | undefined;
      try {
        read = await limiter.readCredits(
          chunk.map((i) => this.#balance(records[i])),
        );
      } catch {
        // the store failed or cannot read: the stored balances
      }
      chunk.forEach((i, j) => {
        answers[i] = read === undefined
          ? storedBalance(records[i].credits!, nowMs)
          : balanceOf(read[j], nowMs);
      });
    }
    return answers;
  }

  /**
   * Applies a validated `change` to `record`'s balance through the limiter
   * (its `timeoutMs` the deadline; see `requireLimiter`) and writes the result back to the records spending
   * it. `ApiKeyValidationError` on `credits` for a key without credits;
   * rejects when the store or the storage fails.
   */
  async update(record: ApiKeyRecord, change: CreditChange): Promise<ApiKeyCreditBalance> {
    const credits = record.credits;
    if (credits === undefined) throw new ApiKeyValidationError("credits", "the key has no credits");
    const now = this.#clock();
    const result = await this.#limiter!.changeCredits(
      creditSubjectOf(record.id, credits),
      creditCounterOf(credits, record.tenantId),
      change,
    );
    await this.#writeBack(credits.balanceKeyId ?? record.id, result.remaining, now);
    return balanceOf(result, now.getTime());
  }

  /** Throws a `TypeError` unless the service has a limiter (checked before any read). */
  requireLimiter(): void {
    if (this.#limiter === undefined) {
      throw new TypeError("updateCredits needs the service's limiter");
    }
  }

  /**
   * Drains the store's changed balances and writes each back (a failed one is
   * kept for the next pass); resolves the first failure, if any. Passes run
   * one at a time, so an older balance never lands after a newer one.
   */
  #flush(): Promise<unknown> {
    const pass = this.#flushing.then(() => this.#flushOnce());
    this.#flushing = pass;
    return pass;
  }

  async #flushOnce(): Promise<unknown> {
    if (this.#drain === undefined) return undefined;
    let failure: unknown;
    try {
      for (const balance of await this.#drain()) {
        if (balance.name === "credits") this.#pending.set(balance.subject, balance);
      }
    } catch (error) {
      failure = error;
    }
    for (const [subject, balance] of [...this.#pending]) {
      const id = keyIdOfSubject(subject);
      try {
        if (id !== undefined) await this.#writeBack(id, balance.remaining, new Date(balance.at));
        this.#pending.delete(subject);
      } catch (error) {
        failure ??= error;
      }
    }
    return failure;
  }

  /** Stops the write-back timer and writes back once more; rejects with the first failure. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    const failure = await this.#flush();
    if (failure !== undefined) throw failure;
  }

  #arm(): void {
    if (this.#drain === undefined || this.#closed) return;
    const timer = setTimeout(async () => {
      const failure = await this.#flush();
      if (failure !== undefined) this.#writeFailed(failure);
      this.#arm();
    }, this.#intervalMs);
    unref(timer);
    this.#timer = timer;
  }

  /** The limiter's balance of `record` (which has credits). */
  #balance(record: ApiKeyRecord): RateLimitBalance {
    const credits = record.credits!;
    return {
      subject: creditSubjectOf(record.id, credits),
      credits: creditCounterOf(credits, record.tenantId),
    };
  }

  /**
   * Writes `remaining` at `at` to the record of `balanceKeyId` and the records
   * of its rotation chain that spend its balance.
   */
  async #writeBack(balanceKeyId: string, remaining: number, at: Date): Promise<void> {
    const setCredits = this.#storage.setCredits;
    if (setCredits === undefined) return;
    let id: string | null = balanceKeyId;
    for (let i = 0; id !== null && i < MAX_CHAIN; i++) {
      const record: ApiKeyRecord | null = await this.#storage.findById(id);
      const credits = record?.credits;
      if (credits === undefined || (credits.balanceKeyId ?? id) !== balanceKeyId) return;
      await setCredits(id, { ...credits, remaining, updatedAt: at });
      this.#rewritten(record!.prefix);
      id = record!.replacedByKeyId;
    }
  }
}

/** Lets the process exit while `timer` is pending (Node's `unref`, Deno's `unrefTimer`). */
function unref(timer: ReturnType<typeof setTimeout>): void {
  if (typeof timer === "number") {
    (globalThis as { Deno?: { unrefTimer(id: number): void } }).Deno?.unrefTimer(timer);
  } else {
    (timer as { unref?: () => void }).unref?.();
  }
}
