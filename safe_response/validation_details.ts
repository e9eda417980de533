/**
 * Per-field validation details: class-validator's `ValidationError` trees become bounded
 * `[{ pointer, messages }]` entries (RFC 6901 pointers); the client's values are never read.
 * @module
 */

/** The parts of a class-validator `ValidationError` that are read (never `value` or `target`). */
export interface ValidationErrorLike {
  /** The property that failed (an index for array items). */
  property: string;
  /** Messages of the failed constraints, by constraint name. */
  constraints?: Record<string, string>;
  /** Errors of the property's own properties (nested objects, array items). */
  children?: ValidationErrorLike[];
}

/** One entry of per-field validation details. */
export interface ValidationFieldDetail {
  /** RFC 6901 JSON Pointer of the property (`""`: the whole body). */
  pointer: string;
  /** Its constraint messages. */
  messages: string[];
}

/** The `validationDetails` option: the message list (default) or `ValidationFieldDetail[]`. */
export type ValidationDetailsMode = "messages" | "fields";

/** Most entries kept (and failing properties read) of one validation error. */
export const MAX_VALIDATION_DETAILS = 50;

/** Most characters of one entry (pointer and messages) and of each flat message. */
export const MAX_VALIDATION_DETAIL_LENGTH = 500;

/** Most error nodes visited (deep trees without failing leaves end the walk). */
const MAX_VISITED = 1000;

/** Where an exception carries its field details (not serialised: a symbol key). */
const VALIDATION_FIELDS = Symbol.for("saferoute.api-kit.validation-fields");

type Bag = Record<string, unknown>;

const isBag = (value: unknown): value is Bag => typeof value === "object" && value !== null;

/** `text` cut to `length` characters, never leaving half a surrogate pair. */
function cut(text: string, length: number): string {
  if (text.length <= length) return text;
  const last = text.charCodeAt(length - 1); // NaN when length is 0
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? length - 1 : length);
}

/** A property name: a string, or an array index. */
function propertyOf(error: Bag): string | undefined {
  const { property } = error;
  return typeof property === "string"
    ? property
    : typeof property === "number"
    ? String(property)
    : undefined;
}

/** The string messages of an error's constraints. */
function constraintMessages(error: Bag): string[] {
  const { constraints } = error;
  if (!isBag(constraints)) return [];
  return Object.values(constraints).filter((message): message is string =>
    typeof message === "string"
  );
}

/**
 * `pointer` cut to `length` characters before an escape (`~0`, `~1`) rather than inside one: a `~`
 * left last would not be a JSON Pointer (RFC 6901), as `format: json-pointer` documents it.
 */
function cutPointer(pointer: string, length: number): string {
  const kept = cut(pointer, length);
  return kept.length < pointer.length && kept.endsWith("~") ? kept.slice(0, -1) : kept;
}

/** The entry of `pointer` and `messages`, cut to {@link MAX_VALIDATION_DETAIL_LENGTH} in all. */
function fieldDetail(pointer: string, messages: readonly unknown[]): ValidationFieldDetail {
  const detail = {
    pointer: cutPointer(pointer, MAX_VALIDATION_DETAIL_LENGTH),
    messages: [] as string[],
  };
  let budget = MAX_VALIDATION_DETAIL_LENGTH - detail.pointer.length;
  const count = Math.min(messages.length, MAX_VALIDATION_DETAIL_LENGTH);
  for (let index = 0; index < count && budget > 0; index++) {
    const message = messages[index];
    if (typeof message !== "string") continue;
    const kept = cut(message, budget);
    detail.messages.push(kept);
    budget -= Math.max(kept.length, 1);
  }
  return detail;
}

/** RFC 6901 escaping of one reference token. */
const escapeToken = (token: string) => token.replaceAll("~", "~0").replaceAll("/", "~1");

/**
 * The per-field entries and the flat message list (as Nest's `ValidationPipe` sends it) of
 * class-validator's `errors`, bounded. Never throws.
 * @example
 * ```ts
 * import { describeValidationErrors } from "@saferoute/api-kit/safe-response";
 * describeValidationErrors([{ property: "zip", constraints: { isString: "zip must be a string" } }]);
 * // { fields: [{ pointer: "/zip", messages: ["zip must be a string"] }], messages: ["zip must be a string"] }
 * ```
 */
export function describeValidationErrors(
  errors: readonly ValidationErrorLike[],
): { fields: ValidationFieldDetail[]; messages: string[] } {
  const fields: ValidationFieldDetail[] = [];
  const messages: string[] = [];
  type Pending = { error: unknown; path: readonly string[] };
  const pending: Pending[] = [];
  const push = (children: unknown, path: readonly string[]) => {
    if (!Array.isArray(children)) return;
    const count = Math.min(children.length, MAX_VISITED - visited);
    for (let index = count - 1; index >= 0; index--) {
      pending.push({ error: children[index], path });
    }
  };
  let visited = 0;
  push(errors, []);
  while (pending.length > 0 && fields.length < MAX_VALIDATION_DETAILS && visited < MAX_VISITED) {
    const { error, path } = pending.pop()!;
    visited++;
    if (!isBag(error)) continue;
    const property = propertyOf(error);
    if (property === undefined) continue;
    const own = constraintMessages(error);
    if (own.length > 0) {
      const pointer = `${path.map((token) => `/${escapeToken(token)}`).join("")}/${
        escapeToken(property)
      }`;
      fields.push(fieldDetail(pointer, own));
      const prefix = path.length === 0 ? "" : `${path.join(".")}.`;
      for (const message of own.slice(0, MAX_VALIDATION_DETAILS)) {
        messages.push(cut(prefix + message, MAX_VALIDATION_DETAIL_LENGTH));
      }
    }
    push(error.children, [...path, property]);
  }
  return { fields, messages };
}

/**
 * Attaches field details to `exception` (under a symbol key) for `validationDetails: "fields"`.
 * @example
 * ```ts
 * import { attachValidationFields } from "@saferoute/api-kit/safe-response";
 * attachValidationFields(new Error("Validation failed"), [{ pointer: "/name", messages: ["required"] }]);
 * ```
 */
export function attachValidationFields<T extends object>(
  exception: T,
  fields: readonly ValidationFieldDetail[],
): T {
  Object.defineProperty(exception, VALIDATION_FIELDS, {
    value: Object.freeze(fields.map((field) => Object.freeze({ ...field }))),
    configurable: true,
  });
  return exception;
}

/** The first {@link MAX_VALIDATION_DETAILS} string messages, each cut to {@link MAX_VALIDATION_DETAIL_LENGTH}. */
function boundedMessages(messages: readonly unknown[]): string[] {
  const kept: string[] = [];
  for (let index = 0; index < messages.length && kept.length < MAX_VALIDATION_DETAILS; index++) {
    const message = messages[index];
    if (typeof message === "string") kept.push(cut(message, MAX_VALIDATION_DETAIL_LENGTH));
  }
  return kept;
}

/**
 * The `details` of a validation error in `mode`: the message list, or the attached field details
 * (else one whole-body entry).
 */
export function validationDetails(
  exception: object,
  messages: readonly unknown[],
  mode: ValidationDetailsMode | undefined,
): unknown {
  if (mode !== "fields") return boundedMessages(messages);
  const fields = (exception as Record<symbol, unknown>)[VALIDATION_FIELDS];
  return Array.isArray(fields) ? fields : [fieldDetail("", messages)];
}
