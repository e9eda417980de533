/**
 * One timer for many deadlines: the door's and the remote stores' waits are
 * bounded through it instead of a timer armed and cleared per call (on Deno a
 * timer armed across an I/O wait costs more than the rest of a Redis check).
 * The timer is re-armed only when it fires or an earlier deadline arrives; it
 * holds the process open only while a deadline is pending (`ref`/`unref`).
 *
 * @module
 */

/** A deadline being watched. */
interface Watch {
  readonly at: number;
  readonly onDue: () => void;
}

type Timer = ReturnType<typeof setTimeout>;
type DenoTimers = { refTimer(id: number): void; unrefTimer(id: number): void };

/** Whether `timer` holds the process open (Node's `ref`/`unref`, Deno's `refTimer`/`unrefTimer`). */
function setRef(timer: Timer, on: boolean): void {
  if (typeof timer === "number") {
    const deno = (globalThis as { Deno?: DenoTimers }).Deno;
    if (on) deno?.refTimer(timer);
    else deno?.unrefTimer(timer);
  } else {
    const t = timer as { ref?: () => void; unref?: () => void };
    if (on) t.ref?.();
    else t.unref?.();
  }
}

/**
 * Calls each watched `onDue` once its moment `at` has passed on `now`'s
 * clock, unless cancelled first; a throw of `onDue` is contained.
 *
 * @example
 * ```ts
 * import { Watchdog } from "./_watchdog.ts";
 * const watchdog = new Watchdog(performance.now.bind(performance));
 * const cancel = watchdog.watch(performance.now() + 1_000, () => console.log("late"));
 * cancel(); // answered in time: nothing is called
 * ```
 */
export class Watchdog {
  readonly #now: () => number;
  readonly #pending = new Set<Watch>();
  #timer: Timer | undefined;
  #timerAt = Infinity;
  #held = false;

  /** A watchdog on the clock `now` (ms). */
  constructor(now: () => number) {
    this.#now = now;
  }

  /** Deadlines pending. */
  get size(): number {
    return this.#pending.size;
  }

  /** Calls `onDue` once `at` has passed; returns what cancels it (idempotent). */
  watch(at: number, onDue: () => void): () => void {
    const watch: Watch = { at, onDue };
    this.#pending.add(watch);
    if (at < this.#timerAt) this.#arm(at);
    else this.#hold(true);
    return () => {
      if (this.#pending.delete(watch) && this.#pending.size === 0) this.#hold(false);
    };
  }

  #hold(on: boolean): void {
    if (this.#timer === undefined || this.#held === on) return;
    this.#held = on;
    setRef(this.#timer, on);
  }

  #arm(at: number): void {
    clearTimeout(this.#timer);
    this.#timerAt = at;
    this.#held = true;
    this.#timer = setTimeout(() => this.#fire(), Math.max(0, at - this.#now()));
  }

  #fire(): void {
    this.#timer = undefined;
    this.#timerAt = Infinity;
    const now = this.#now();
    let next = Infinity;
    for (const watch of [...this.#pending]) {
      if (now < watch.at) {
        next = Math.min(next, watch.at);
        continue;
      }
      this.#pending.delete(watch);
      try {
        watch.onDue();
      } catch {
        // A caller's throw must not stop the other deadlines.
      }
    }
    if (next !== Infinity && next < this.#timerAt) this.#arm(next);
  }
}
