import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  assertEpochMs,
  assertName,
  assertSubject,
  MAX_EPOCH_MS,
} from "../../rate_limits/_checks.ts";
import { MAX_SUBJECT_LENGTH } from "../../rate_limits/store.ts";

describe("assertSubject", () => {
  it("accepts 1 to 512 printable characters", () => {
    assert.equal(assertSubject("key:0190:x"), "key:0190:x");
    assert.equal(assertSubject("key:%7Bx%7D"), "key:%7Bx%7D");
    assert.equal(assertSubject("k".repeat(MAX_SUBJECT_LENGTH)).length, 512);
  });
  it("refuses a lone surrogate (UTF-8 would send each as U+FFFD: one remote counter); accepts a pair and U+FFFD itself", () => {
    for (const bad of ["user-\uD800", "user-\uDC00", "\uDC00\uD800", "a\uD800b", "\uD83D"]) {
      assert.throws(
        () => assertSubject(bad),
        (e: Error) => e instanceof TypeError && /lone surrogate/.test(e.message),
        JSON.stringify(bad),
      );
    }
    assert.equal(assertSubject("user-\uFFFD"), "user-\uFFFD");
    assert.equal(assertSubject("key:\uD83D\uDE00"), "key:\uD83D\uDE00");
  });
  it("refuses { and } (a Redis hash tag's delimiters: two subjects would share a key)", () => {
    for (const bad of ["key:0190{x}", "acme}:alice", "alice}", "{", "}"]) {
      assert.throws(
        () => assertSubject(bad),
        (e: Error) => e instanceof TypeError && /must not contain \{ or \}/.test(e.message),
        bad,
      );
    }
  });
  it("refuses empty, too long, non-string and control characters", () => {
    for (const bad of ["", "k".repeat(513), 1, "a\nb", "a\u0000b", "a\u007fb"]) {
      assert.throws(() => assertSubject(bad), TypeError, String(bad));
    }
  });
});

describe("assertName", () => {
  it("accepts 1-64 characters of a-z 0-9 _ - . *, a letter or * first", () => {
    assert.equal(assertName("burst", "name"), "burst");
    assert.equal(assertName("*.a-b_1", "name"), "*.a-b_1");
    assert.equal(assertName("a".repeat(64), "name").length, 64);
  });
  it("refuses anything else, naming what", () => {
    for (const bad of ["", "Burst", "1a", "a b", "a".repeat(65), 7]) {
      assert.throws(() => assertName(bad, "credits.name"), /credits\.name must be 1-64/);
    }
  });
});

describe("assertEpochMs", () => {
  it("accepts a safe integer of 0 to 9e14 (year 30,489: 10 × it stays a safe integer)", () => {
    assert.ok(10 * MAX_EPOCH_MS <= Number.MAX_SAFE_INTEGER);
    for (const ok of [0, Date.UTC(2026, 0, 1), 9e14]) {
      assert.equal(assertEpochMs(ok, "nowMs"), ok);
    }
  });
  it("refuses anything else, naming what", () => {
    for (const bad of [-1, 0.5, 9e14 + 1, 8.64e15, Number.NaN, Infinity, "1", null, undefined]) {
      assert.throws(() => assertEpochMs(bad, "nowMs"), /^TypeError: nowMs must be/, String(bad));
    }
  });
});
