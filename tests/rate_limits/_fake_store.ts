/**
 * A fake remote store for the limiter's tests: the in-memory store behind a
 * request delay, a stall, a failure or a late reply, honouring the deadline
 * contract (a check reaching it at or past its deadline answers `null` and
 * applies nothing). It records when each check was applied and how many of
 * its calls are pending.
 */
import { createMemoryRateLimitStore } from "../../rate_limits/memory_store.ts";
import type {
  CreditChange,
  CreditCounter,
  RateLimitStore,
  StoreBatchAnswer,
  StoreCheck,
} from "../../rate_limits/store.ts";

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A remote store that can be slowed, stalled or failed. */
export class FakeRemoteStore implements RateLimitStore {
  readonly name = "fake";
  readonly inner = createMemoryRateLimitStore();
  /** Ms a call takes to reach the store (it is applied after). */
  requestDelayMs = 0;
  /** Ms the reply takes to come back (after it was applied). */
  replyDelayMs = 0;
  /** While true, calls wait (in the "network") until `resume()`. */
  stalled = false;
  /** When set, every call rejects with it. */
  failing: Error | undefined;
  /** Store calls received, pending now, and the most pending at once. */
  calls = 0;
  pending = 0;
  maxPending = 0;
  /** Checks per `checkBatch` call. */
  readonly batches: number[] = [];
  /** When each check was applied (Date.now()), by its first counter's subject. */
  readonly appliedAt = new Map<string, number>();
  #waiting: (() => void)[] = [];

  /** Ends a stall: the waiting calls reach the store now. */
  resume(): void {
    this.stalled = false;
    for (const go of this.#waiting.splice(0)) go();
  }

  async #travel<T>(apply: () => Promise<T>): Promise<T> {
    this.calls++;
    this.pending++;
    this.maxPending = Math.max(this.maxPending, this.pending);
    try {
      if (this.failing) throw this.failing;
      if (this.requestDelayMs > 0) await sleep(this.requestDelayMs);
      while (this.stalled) await new Promise<void>((go) => this.#waiting.push(go));
      if (this.failing) throw this.failing;
      const answer = await apply();
      if (this.replyDelayMs > 0) await sleep(this.replyDelayMs);
      return answer;
    } finally {
      this.pending--;
    }
  }

  checkBatch(checks: readonly StoreCheck[]): Promise<StoreBatchAnswer> {
    this.batches.push(checks.length);
    return this.#travel(async () => {
      const answer = await this.inner.checkBatch(checks);
      answer.results.forEach((result, i) => {
        if (result !== null) this.appliedAt.set(checks[i].counters[0].subject, Date.now());
      });
      return answer;
    });
  }

  changeCredits(counter: CreditCounter, change: CreditChange, deadline: number) {
    return this.#travel(() => this.inner.changeCredits(counter, change, deadline));
  }

  readCredits(counters: readonly CreditCounter[]) {
    return this.#travel(() => this.inner.readCredits(counters));
  }
}
