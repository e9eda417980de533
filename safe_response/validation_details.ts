/**
 * Per-field validation details: class-validator's `ValidationError` trees
 * (as Nest's `ValidationPipe` hands them to an `exceptionFactory`) become
 * `[{ pointer, messages }]` entries, the failing property as an RFC 6901
 * JSON Pointer (a nested DTO's field is `/address/zip`), and the flat message
 * list Nest's own factory sends. Only property paths and constraint messages
 * are read: the `value` and `target` of an error (the client's values) never
 * are; property names, unknown ones included, are echoed. Bounded: at most {@link MAX_VALIDATION_DETAILS} entries of at most
 * {@link MAX_VALIDATION_DETAIL_LENGTH} characters each.
 *
 * @module
 */

/**
 * The parts of a class-validator `ValidationError` that are read (Nest's
 * `ValidationError` fits). Its `value` and `target` are never read.
 * @example
 * ```ts
 * import type { ValidationErrorLike } from "@saferoute/api-kit/safe-response";
 * const error: ValidationErrorLike = {
 *   property: "address",
 *   children: [{ property: "zip", constraints: { isString: "zip must be a string" } }],
 * };
 * ```
 */
export interface ValidationErrorLike {
  /** The property that failed (an index for array items). */
  property: string;
  /** Messages of the failed constraints, by constraint name. */
  constraints?: Record<string, string>;
  /** Errors of the property's own properties (nested objects, array items). */
  children?: ValidationErrorLike[];
}

/**
 * One entry of per-field validation details: the failing property as a JSON
 * Pointer into the request body, and its messages.
 * @example
 * ```ts
 * import type { ValidationFieldDetail } from "@saferoute/api-kit/safe-response";
 * const detail: ValidationFieldDetail = {
 *   pointer: "/address/zip",
 *   messages: ["zip must be a string"],
 * };
 * ```
 */
export interface ValidationFieldDetail {
  /** RFC 6901 JSON Pointer of the property (`""`: the whole body). */
  pointer: string;
  /** Its constraint messages. */
  messages: string[];
}

/**
 * The `validationDetails` option: `"messages"` (the default: `details` is the
 * message list, as Nest's `ValidationPipe` makes it) or `"fields"` (`details`
 * is `ValidationFieldDetail[]`).
 * @example
 * ```ts
 * import type { ValidationDetailsMode } from "@saferoute/api-kit/safe-response";
 * const mode: ValidationDetailsMode = "fields";
 * ```
 */
export type ValidationDetailsMode = "messages" | "fields";

/**
 * Most entries kept (and most failing properties read) of one validation
 * error.
 * @example
 * ```ts
 * import { MAX_VALIDATION_DETAILS } from "@saferoute/api-kit/safe-response";
 * MAX_VALIDATION_DETAILS; // 50
 * ```
 */
export const MAX_VALIDATION_DETAILS = 50;

/**
 * Most characters of one entry: its pointer and messages together (what
 * does not fit is cut); also the bound of each message of the flat list.
 */
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
 * The entry of `pointer` and `messages`, at most
 * {@link MAX_VALIDATION_DETAIL_LENGTH} characters in all (the pointer first,
 * then the messages that fit, the last one cut).
 */
function fieldDetail(pointer: string, messages: readonly unknown[]): ValidationFieldDetail {
  const detail = { pointer: cut(pointer, MAX_VALIDATION_DETAIL_LENGTH), messages: [] as string[] };
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
 * The details of class-validator's `errors`: `fields`, one entry per failing
 * property (depth first, in class-validator's order) with its JSON Pointer
 * and constraint messages, and `messages`, the flat list Nest's
 * `ValidationPipe` sends by default (a nested property's messages prefixed
 * with its parent path: `address.zip must be a string`). Bounded: at most
 * {@link MAX_VALIDATION_DETAILS} failing properties are read, each entry and
 * each message at most {@link MAX_VALIDATION_DETAIL_LENGTH} characters. No
 * shape makes it throw; the walk is iterative (no recursion on deep trees).
 * @example
 * ```ts
 * import { describeValidationErrors } from "@saferoute/api-kit/safe-response";
 * describeValidationErrors([{
 *   property: "address",
 *   children: [{ property: "zip", constraints: { isString: "zip must be a string" } }],
 * }]);
 * // { fields: [{ pointer: "/address/zip", messages: ["zip must be a string"] }],
 * //   messages: ["address.zip must be a string"] }
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
    // Reversed onto the stack, so they are visited in order.
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
 * Attaches field details to `exception` (under a symbol key, so no
 * serialiser sends them) for `resolveError` to send with
 * `validationDetails: "fields"`. Returns `exception`.
 * @example
 * ```ts
 * import { attachValidationFields, describeValidationErrors } from "@saferoute/api-kit/safe-response";
 * const { fields } = describeValidationErrors([
 *   { property: "name", constraints: { isString: "name must be a string" } },
 * ]);
 * const exception = attachValidationFields(new Error("Validation failed"), fields);
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

/**
 * The `details` of a validation error whose message list is `messages`, in
 * `mode`: the list itself (`"messages"`), or the field details attached to
 * `exception`, else one entry for the whole body (`pointer: ""`) holding the
 * list, bounded as any entry (`"fields"`).
 */
export function validationDetails(
  exception: object,
  messages: readonly unknown[],
  mode: ValidationDetailsMode | undefined,
): unknown {
  if (mode !== "fields") return messages;
  const fields = (exception as Record<symbol, unknown>)[VALIDATION_FIELDS];
  return Array.isArray(fields) ? fields : [fieldDetail("", messages)];
}
