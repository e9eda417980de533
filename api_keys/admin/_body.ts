/**
 * Reading the admin routes' inputs: a bounded JSON object body with known
 * fields only, and the field checks. Every failure is an `AdminHttpError`.
 *
 * @module
 */
import { isoInstantMs } from "../../client/_instant.ts";
import { fail, failTime, instantProblem, requireObjectOf } from "../_input.ts";
import { bodyBytes } from "../leaks/_core.ts";

/** An answer other than success, thrown inside a handler. */
export class AdminHttpError extends Error {
  /** HTTP status. */
  readonly status: number;
  /** `error.code` of the answer. */
  readonly code: string;
  /** `error.details` of the answer. */
  readonly details: Record<string, unknown> | undefined;

  /** `message` is safe to send. */
  constructor(status: number, code: string, message: string, details?: Record<string, unknown>) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

const decoder = new TextDecoder("utf-8", { fatal: true });

/**
 * The JSON object of `body` (empty: `{}`): at most `maxBytes`, UTF-8, own
 * properties of `fields` only (`__proto__` is an unknown field like any).
 * `undefined`, a body the binding could not read, is refused, never read as
 * empty (a rotation would run with its defaults).
 * Throws 413 `payload_too_large` or 400 `api_key_invalid_input`.
 */
export function readObject(
  body: Uint8Array | string | null | undefined,
  maxBytes: number,
  fields: readonly string[],
): Record<string, unknown> {
  if (body === undefined) fail("body", "could not be read: send it whole, as application/json");
  const bytes = bodyBytes(body ?? "", maxBytes);
  if (bytes === null) {
    throw new AdminHttpError(413, "payload_too_large", `The body exceeds ${maxBytes} bytes`);
  }
  if (bytes.length === 0) return {};
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(bytes));
  } catch {
    fail("body", "must be JSON in UTF-8");
  }
  requireObjectOf(value, fields, "body", "a JSON object");
  return value as Record<string, unknown>;
}

/** `value` when it is one of `allowed`; `fallback` when omitted. */
export function oneOf<T extends string>(
  value: unknown,
  allowed: readonly T[],
  fallback: T,
  field: string,
): T {
  if (value === undefined) return fallback;
  if (!allowed.includes(value as T)) fail(field, `must be one of ${allowed.join(", ")}`);
  return value as T;
}

/** A list of 1 (or 0 when `min` is 0) to `max` strings. */
export function stringList(value: unknown, field: string, min: number, max: number): string[] {
  if (
    !Array.isArray(value) || value.length < min || value.length > max ||
    !value.every((item) => typeof item === "string")
  ) {
    fail(field, `must be a list of ${min} to ${max} strings`);
  }
  return value;
}

/** An instant from a query parameter, as strict as a body's (`bodyInstant`), or `fallback` when absent. */
export function queryInstant(
  value: string | null | undefined,
  fallback: Date,
  field: string,
): Date {
  return value === null || value === undefined ? fallback : bodyInstant(value, field);
}

/**
 * An ISO 8601 instant from a body field, strictly (`isoInstantMs`: date,
 * time and offset all written, each part within its range), no later than
 * 9999-12-31T23:59:59.999Z once its offset is applied (`instantProblem`).
 */
export function bodyInstant(value: unknown, field: string): Date {
  const ms = isoInstantMs(value, false);
  if (!Number.isNaN(ms)) {
    const problem = instantProblem(ms);
    return problem === undefined ? new Date(ms) : failTime(field, problem);
  }
  return fail(field, "must be an ISO 8601 instant with its offset, such as 2030-01-31T12:00:00Z");
}
