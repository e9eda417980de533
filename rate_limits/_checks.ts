/**
 * Input checks of the rate-limits core that no other module takes: a policy
 * or balance name, and a counter subject. Each throws a `TypeError` naming
 * what is wrong.
 *
 * @module
 */
import { MAX_SUBJECT_LENGTH } from "./store.ts";

const NAME = /^[a-z*][a-z0-9_\-.*]{0,63}$/;

/**
 * Throws a `TypeError` naming `what` unless `name` is a policy name: 1–64
 * characters of `a-z 0-9 _ - . *`, a letter or `*` first.
 *
 * @example
 * ```ts
 * import { assertName } from "./_checks.ts";
 * assertName("burst", "policy name"); // "burst"
 * ```
 */
export function assertName(name: unknown, what: string): string {
  if (typeof name !== "string" || name.length > 64 || !NAME.test(name)) {
    throw new TypeError(
      `${what} must be 1-64 characters of a-z 0-9 _ - . * starting with a-z or *`,
    );
  }
  return name;
}

/**
 * Throws a `TypeError` unless `subject` is 1–512 characters without control characters.
 *
 * @example
 * ```ts
 * import { assertSubject } from "./_checks.ts";
 * assertSubject("key:0190"); // "key:0190"
 * ```
 */
export function assertSubject(subject: unknown): string {
  if (
    typeof subject !== "string" || subject.length === 0 || subject.length > MAX_SUBJECT_LENGTH
  ) {
    throw new TypeError(
      `rate-limit subject must be a string of 1-${MAX_SUBJECT_LENGTH} characters`,
    );
  }
  for (let i = 0; i < subject.length; i++) {
    const code = subject.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) {
      throw new TypeError("rate-limit subject must not contain control characters");
    }
  }
  return subject;
}
