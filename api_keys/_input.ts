/**
 * The rules every input check of the component builds on: instants (and the
 * one parser of their text) and durations, the one way an
 * `ApiKeyValidationError` is built, non-empty strings, tenant ids of
 * lookups, the text rules (printable, storable, actor names, key ids), objects
 * of known fields, what an error may echo, the thresholds of the expiry notices, and
 * the check of an injected clock. The checks of `create`,
 * `rotate` and `list` inputs are in `_key_input.ts` (loaded with the flows,
 * not at import).
 *
 * @module
 */
import { hasLoneSurrogate } from "../telemetry/_text.ts";
import { ApiKeyValidationError } from "./errors.ts";

/**
 * The latest instant a duration or an expiry may produce (epoch ms of
 * 9999-12-31T23:59:59.999Z): every date the service stores or computes is at
 * most this, so it is valid and fits a database timestamp.
 */
export const MAX_API_KEY_INSTANT_MS: number = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * The earliest instant the service reads or stores (epoch ms of
 * 0001-01-01T00:00:00.000Z): a database timestamp holds it everywhere.
 */
export const MIN_API_KEY_INSTANT_MS: number = Date.parse("0001-01-01T00:00:00.000Z");

/**
 * What is wrong with the instant `ms` (a number), or `undefined` when it lies
 * from `MIN_API_KEY_INSTANT_MS` to `MAX_API_KEY_INSTANT_MS`. Callers wrap the
 * problem in their own error.
 */
export function instantProblem(ms: number): string | undefined {
  if (ms < MIN_API_KEY_INSTANT_MS) return "must not be before 0001-01-01T00:00:00.000Z";
  return ms <= MAX_API_KEY_INSTANT_MS ? undefined : "must not reach past 9999-12-31T23:59:59.999Z";
}

/**
 * What is wrong with `value` as a duration in ms starting at `fromMs`, or
 * `undefined`: it must be a whole number, at least 0, whose end
 * (`fromMs + value`) passes `instantProblem`. The one rule for every duration
 * of the component (`gracePeriodMs`, the TTL policy, `debounceMs`,
 * `storageTimeoutMs`).
 */
export function durationProblem(value: unknown, fromMs: number): string | undefined {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
    return "must be a non-negative whole number of milliseconds";
  }
  return instantProblem(fromMs + value);
}

/**
 * An injected wall clock (`label` names it), read through a check: an answer
 * that is not a valid `Date` throws a `TypeError`, as a throwing clock does
 * (the work fails closed: an Invalid Date would pass every expiry check, be
 * stored as `lastUsedAt` and date events).
 */
export function checkedClock(clock: () => Date, label: string): () => Date {
  return () => {
    const now: unknown = clock();
    if (!(now instanceof Date) || Number.isNaN(now.getTime())) {
      throw new TypeError(`${label} must answer a valid Date`);
    }
    return now;
  };
}

/** Throws the `ApiKeyValidationError` of `field` (the one way they are built). */
export function fail(field: string, problem: string): never {
  throw new ApiKeyValidationError(field, problem);
}

/** Throws the `ApiKeyValidationError` of a bad date or duration `field` (`api_key_invalid_time`). */
export function failTime(field: string, problem: string): never {
  throw new ApiKeyValidationError(field, problem, "api_key_invalid_time");
}

/**
 * Returns `value` when it is a duration from `fromMs` (see `durationProblem`);
 * otherwise throws `ApiKeyValidationError` (`api_key_invalid_time`) naming `field`.
 */
export function requireDuration(value: unknown, field: string, fromMs: number): number {
  const problem = durationProblem(value, fromMs);
  if (problem !== undefined) failTime(field, problem);
  return value as number;
}

/** 32 letters or digits in a row: a hash (hex), a key's secret, a token. */
const SECRET_RUN = /[0-9A-Za-z]{32}/;

/**
 * Whether an error may show the untrusted `text` (the one rule for echoing
 * it): at most `maxLength` characters, all matched by `shape` (tested only
 * then), and no 32 letters or digits in a row, which could be a hash or a
 * secret. Otherwise the caller names it by its length or index.
 */
export function isEchoable(text: string, shape: RegExp, maxLength: number): boolean {
  return text.length <= maxLength && shape.test(text) && !SECRET_RUN.test(text);
}

/** Unknown field names listed at most. */
const MAX_LISTED_FIELDS = 10;

/** A field name an error shows: an identifier of at most 32 characters (see `isEchoable`). */
const SHOWN_FIELD = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Checks that `value` is an object of `fields`; else throws
 * `api_key_invalid_input` for `field` (`body`, `record`, `input`): `must be
 * ${kind}` when it is no object or an array (whose indexes are no fields), or
 * naming its own keys outside `fields` (some; never a value), then `fields`: a
 * field misspelt or of another system silently ignored is a setting silently
 * lost. A name that is no short identifier, or may be a hash or a key, is
 * given by its length.
 */
export function requireObjectOf(
  value: unknown,
  fields: readonly string[],
  field: string,
  kind = "an object",
): asserts value is object {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    fail(field, `must be ${kind}`);
  }
  const unknown = Object.keys(value).filter((name) => !fields.includes(name));
  if (unknown.length === 0) return;
  const shown = unknown.slice(0, MAX_LISTED_FIELDS).map((name) =>
    isEchoable(name, SHOWN_FIELD, 32) ? name : `(a name of ${name.length} characters)`
  );
  const rest = unknown.length - shown.length;
  fail(
    field,
    `unknown fields: ${shown.join(", ")}${rest > 0 ? ` and ${rest} more` : ""} (known: ${
      fields.join(", ")
    })`,
  );
}

/** Throws unless `value` is a non-empty string (after trimming). */
export function requireNonEmptyString(value: unknown, field: string): string {
  if (typeof value !== "string" || value.trim() === "") fail(field, "must be a non-empty string");
  return value;
}

/**
 * A tenant id a method reads or acts by (`list`, `revokeForTenant`, `usage`,
 * the audit log...): a non-empty string the storage can hold
 * (`storableTextProblem`), else `api_key_invalid_input` naming `tenantId`.
 * A new key's id is stricter (`_key_input.ts`); ids stored before a rule was
 * added keep being listed and revoked.
 */
export function requireTenantId(value: unknown): string {
  const tenantId = requireNonEmptyString(value, "tenantId");
  const problem = storableTextProblem(tenantId);
  if (problem !== undefined) fail("tenantId", problem);
  return tenantId;
}

/** Longest actor's name, in UTF-16 units: a key's `createdBy` and the admin routes' `actorOf`. */
export const MAX_ACTOR_LENGTH = 200;

/**
 * Format characters that change how text around them shows or splits:
 * U+2028 and U+2029 (line and paragraph separators), the bidi controls
 * (U+202A to U+202E, U+2066 to U+2069: `ci\u202Egnp.exe` shows as
 * `ciexe.png`), U+200B (zero-width space), U+200E and U+200F (direction
 * marks) and U+FEFF. ZWNJ and ZWJ (U+200C, U+200D) stay: emoji sequences
 * and several scripts need them.
 */
const HIDDEN_FORMAT = /[\u2028\u2029\u202A-\u202E\u2066-\u2069\u200B\u200E\u200F\uFEFF]/;

/**
 * What keeps `text` from being shown and logged as it reads, or `undefined`:
 * a control character (C0, DEL, C1), a format character of `HIDDEN_FORMAT`,
 * or what `storableTextProblem` refuses. No text field holds a line break,
 * so the settings page can ask the name typed and a log line quoting it
 * stays one line; nor a bidi control, so no name shows reversed.
 */
export function printableProblem(text: string): string | undefined {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) {
      return "must not contain control characters (line breaks, tabs)";
    }
  }
  if (HIDDEN_FORMAT.test(text)) {
    return "must not contain line or paragraph separators, bidi controls or invisible marks";
  }
  return storableTextProblem(text);
}

/**
 * Returns `text`, or throws `api_key_invalid_input` for `field` when
 * `printableProblem` finds one: the one rule of key names, tenant ids of new
 * keys and `createdBy`.
 */
export function requirePrintable(text: string, field: string): string {
  const problem = printableProblem(text);
  if (problem !== undefined) fail(field, problem);
  return text;
}

/** Longest tenant id of a new key, in UTF-16 units (seed 0.4). */
const MAX_TENANT_ID_LENGTH = 255;

/**
 * A new key's tenant id: 1 to 255 UTF-16 units without surrounding
 * whitespace, printable (`requirePrintable`: no control or bidi character,
 * no U+0000, which PostgreSQL refuses, and no lone surrogate, which would
 * become U+FFFD in the UTF-8 the audit chain hashes and signs, so two ids
 * would share one chain's text). Ids already stored are not checked again
 * (they keep verifying; lookups: `requireTenantId`).
 */
export function validTenantId(value: unknown): string {
  const tenantId = requireNonEmptyString(value, "tenantId");
  if (tenantId.trim() !== tenantId) fail("tenantId", "must not start or end with whitespace");
  if (tenantId.length > MAX_TENANT_ID_LENGTH) {
    fail("tenantId", `must be at most ${MAX_TENANT_ID_LENGTH} UTF-16 code units`);
  }
  return requirePrintable(tenantId, "tenantId");
}

/**
 * What is wrong with `value` as an actor's name (a key's `createdBy`, the
 * admin routes' `actorOf` answer), or `undefined`: 1 to `MAX_ACTOR_LENGTH`
 * characters, not only spaces, printable (`printableProblem`).
 */
export function actorProblem(value: unknown): string | undefined {
  if (typeof value !== "string" || value.trim() === "" || value.length > MAX_ACTOR_LENGTH) {
    return `must be 1 to ${MAX_ACTOR_LENGTH} characters, not only spaces`;
  }
  return printableProblem(value);
}

/** Longest key id, in UTF-16 units: an imported one, an `idFactory`'s, a list cursor's. */
export const MAX_KEY_ID_LENGTH = 200;

/**
 * What is wrong with `value` as a new key's id (imported, or from
 * `idFactory`), or `undefined`: 1 to `MAX_KEY_ID_LENGTH` characters, not only
 * spaces, printable (`printableProblem`), so a list page's cursor, a log line
 * and PostgreSQL carry it as it is; not `.` or `..`, which a URL resolves as
 * a dot segment (even percent-encoded): the admin routes' `/keys/<id>` would
 * name another route.
 */
export function keyIdProblem(value: unknown): string | undefined {
  if (typeof value !== "string" || value.trim() === "" || value.length > MAX_KEY_ID_LENGTH) {
    return `must be 1 to ${MAX_KEY_ID_LENGTH} characters, not only spaces`;
  }
  if (value === "." || value === "..") {
    return 'must not be "." or ".." (a URL path resolves them)';
  }
  return printableProblem(value);
}

/**
 * What keeps `text` from being stored, or `undefined`: U+0000 or a lone
 * surrogate (an emoji cut in half), which PostgreSQL's `jsonb` (the audit
 * log's columns) refuses and UTF-8 cannot carry. The one rule for the text
 * the component stores: key names, tenant ids, `createdBy`
 * (`printableProblem`) and the audit context.
 */
export function storableTextProblem(text: string): string | undefined {
  return text.includes("\0") || hasLoneSurrogate(text)
    ? "must not contain U+0000 or a lone surrogate"
    : undefined;
}

/** Most thresholds one run accepts. */
const MAX_THRESHOLDS = 32;

/** Longest threshold: about 100 years, far below the latest instant the service stores. */
const MAX_THRESHOLD_MS = 100 * 365 * 86_400_000;

/**
 * What is wrong with `value` as the thresholds of `notifyExpiring`, or
 * `undefined`: a non-empty array (at most 32) of positive whole numbers of
 * milliseconds, each at most about 100 years. The one rule, for the service
 * and the Nest module's `expiryNotices` option (here, not in _expiry.ts: the
 * module checks it at start without loading the job).
 */
export function thresholdsProblem(value: unknown): string | undefined {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_THRESHOLDS) {
    return `must be a non-empty array of at most ${MAX_THRESHOLDS} durations`;
  }
  for (const threshold of value) {
    if (!Number.isSafeInteger(threshold) || threshold <= 0 || threshold > MAX_THRESHOLD_MS) {
      return `must be positive whole numbers of milliseconds, at most ${MAX_THRESHOLD_MS}`;
    }
  }
  return undefined;
}
