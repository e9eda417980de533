/**
 * One timer for many deadlines: the door's waits are bounded through it
 * instead of a timer armed and cleared per call (on Deno a timer armed across
 * an I/O wait costs more than the rest of a Redis check).
 * The timer is re-armed only when it fires or an earlier deadline arrives; it
 * holds the process open only while a deadline is pending (`ref`/`unref`).
 * When it fires, the due calls wait one more turn of the event loop: a reply
 * that arrived while the process was busy (a starved process's timer and its
 * I/O come due together, and timers run first) is read and delivered before
 * its deadline's call, so a store's in-time answer is never dropped for the
 * failure policy's.
 *
 * @module
 */

type Timer = ReturnType<typeof setTimeout>;
type DenoTimers = { refTimer(id: number): void; unrefTimer(id: number): void };
const DENO = (globalThis as { Deno?: DenoTimers }).Deno;

/** Whether `timer` holds the process open (Node's `ref`/`unref`, Deno's `refTimer`/`unrefTimer`). */
export function setRef(timer: Timer, on: boolean): void {
  if (typeof timer === "number") {
    if (on) DENO?.refTimer(timer);
    else DENO?.unrefTimer(timer);
  } else {
    const t = timer as { ref?: () => void; unref?: () => void };
    if (on) t.ref?.();
    else t.unref?.();
  }
}

/**
 * A deadline being watched, a link of its watchdog's list (no hashing, no
 * closure: watching and cancelling are a few stores).
 */
export interface Watch {
  readonly at: number;
  readonly onDue: () => void;
  /** Neighbours in the list (undefined at an end). */
  prev: Watch | undefined;
  next: Watch | undefined;
  /** Whether it is still watched. */
  live: boolean;
}

/**
 * Calls each watched `onDue` once its moment `at` has passed on `now`'s
 * clock, unless cancelled first; a throw of `onDue` is contained.
 *
 * @example
 * ```ts
 * import { Watchdog } from "./_watchdog.ts";
 * const watchdog = new Watchdog(performance.now.bind(performance));
 * const watch = watchdog.watch(performance.now() + 1_000, () => console.log("late"));
 * watchdog.cancel(watch); // answered in time: nothing is called
 * ```
 */
export class Watchdog {
  readonly #now: () => number;
  #first: Watch | undefined;
  #last: Watch | undefined;
  #size = 0;
  #timer: Timer | undefined;
  #timerAt = Infinity;
  #held = false;

  /** A watchdog on the clock `now` (ms). */
  constructor(now: () => number) {
    this.#now = now;
  }

  /** Deadlines pending. */
  get size(): number {
    return this.#size;
  }

  /** Calls `onDue` once `at` has passed; returns the watch (`cancel` stops it). */
  watch(at: number, onDue: () => void): Watch {
    const watch: Watch = { at, onDue, prev: this.#last, next: undefined, live: true };
    if (this.#last === undefined) this.#first = watch;
    else this.#last.next = watch;
    this.#last = watch;
    this.#size++;
    if (at < this.#timerAt) this.#arm(at);
    else this.#hold(true);
    return watch;
  }

  /** Stops watching `watch` (idempotent; nothing once it was called). */
  cancel(watch: Watch | undefined): void {
    if (watch === undefined || !watch.live) return;
    this.#unlink(watch);
    if (this.#size === 0) this.#hold(false);
  }

  #unlink(watch: Watch): void {
    const { prev, next } = watch;
    if (prev === undefined) this.#first = next;
    else prev.next = next;
    if (next === undefined) this.#last = prev;
    else next.prev = prev;
    watch.prev = watch.next = undefined;
    watch.live = false;
    this.#size--;
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
    this.#timer = setTimeout(() => this.#yield(), Math.max(0, at - this.#now()));
  }

  /**
   * The timer fired: what is due now is called after the I/O already received
   * (a 0 ms timer runs after it on Node and Deno).
   */
  #yield(): void {
    const now = this.#now();
    this.#timer = setTimeout(() => this.#fire(now), 0);
  }

  /** Calls what was due at `now` and re-arms for the rest. */
  #fire(now: number): void {
    this.#timer = undefined;
    this.#timerAt = Infinity;
    let next = Infinity;
    const due: Watch[] = [];
    for (let watch = this.#first; watch !== undefined;) {
      const after = watch.next;
      if (now < watch.at) next = Math.min(next, watch.at);
      else {
        this.#unlink(watch);
        due.push(watch);
      }
      watch = after;
    }
    for (const watch of due) {
      try {
        watch.onDue();
      } catch {
        // A caller's throw must not stop the other deadlines.
      }
    }
    if (next !== Infinity && next < this.#timerAt) this.#arm(next);
  }
}
