/**
 * Field selection (partial responses): `?fields=id,address.city` keeps only those fields of `data`.
 * @module
 */
import { refuseUnknownOptions } from "./_options.ts";

/** Field-selection options (module option `fieldSelection`, decorator `FieldSelection`). */
export interface FieldSelectionOptions {
  /** Query parameter read; default `fields`. */
  queryParam?: string;
  /** Separator of the fields; default `,`. */
  separator?: string;
  /** Most segments of a dotted path (1-10); deeper segments are cut; default 3. */
  maxDepth?: number;
  /** Most distinct paths kept (1-512); later ones are dropped; default 50. */
  maxFields?: number;
  /** Longest path in characters (1-1024); a longer one is dropped; default 1024. */
  maxFieldLength?: number;
}

/** Field-selection options with defaults applied. */
export type FieldSelectionSettings = Readonly<Required<FieldSelectionOptions>>;

/** Bounds on hostile input: repeated parameters read, characters in all, default `maxFields`. */
export const FIELD_SELECTION_LIMITS: Readonly<{ values: number; length: number; fields: number }> =
  Object.freeze({ values: 10, length: 1024, fields: 50 });

const DEFAULTS: FieldSelectionSettings = Object.freeze({
  queryParam: "fields",
  separator: ",",
  maxDepth: 3,
  maxFields: FIELD_SELECTION_LIMITS.fields,
  maxFieldLength: FIELD_SELECTION_LIMITS.length,
});

const OPTION_NAMES = Object.keys(DEFAULTS);

/** The numeric options and their ranges. */
const RANGES = {
  maxDepth: [1, 10],
  maxFields: [1, 512],
  maxFieldLength: [1, FIELD_SELECTION_LIMITS.length],
} as const;

const FORBIDDEN = new Set(["__proto__", "constructor", "prototype"]);

function fail(option: string, expected: string): never {
  throw new TypeError(`${option} must be ${expected}`);
}

/**
 * Validates field-selection options merged over `base` (default: the defaults); `false` is off.
 * Throws a `TypeError` naming `name` on a bad value or an unknown option.
 * @example
 * ```ts
 * import { resolveFieldSelection } from "@saferoute/api-kit/safe-response";
 * resolveFieldSelection({ maxDepth: 2 }, "fieldSelection")?.maxDepth; // 2
 * ```
 */
export function resolveFieldSelection(
  value: unknown,
  name: string,
  base: FieldSelectionSettings = DEFAULTS,
): FieldSelectionSettings | undefined {
  if (value === undefined || value === false) return undefined;
  if (value === true) return base;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    fail(name, `a boolean or { ${OPTION_NAMES.join("?, ")}? }`);
  }
  refuseUnknownOptions(value, OPTION_NAMES, name);
  const options = value as Record<string, unknown>;
  const { queryParam = base.queryParam, separator = base.separator } = options;
  if (typeof queryParam !== "string" || queryParam === "") {
    fail(`${name}.queryParam`, "a non-empty string");
  }
  if (typeof separator !== "string" || separator === "" || separator.includes(".")) {
    fail(`${name}.separator`, "a non-empty string without `.`");
  }
  const numbers = {} as Record<keyof typeof RANGES, number>;
  for (
    const [key, [min, max]] of Object.entries(RANGES) as [
      keyof typeof RANGES,
      readonly [number, number],
    ][]
  ) {
    const given = options[key] ?? base[key];
    if (!Number.isSafeInteger(given) || (given as number) < min || (given as number) > max) {
      fail(`${name}.${key}`, `an integer from ${min} to ${max}`);
    }
    numbers[key] = given as number;
  }
  return Object.freeze({ queryParam, separator, ...numbers });
}

/** Selected paths as a tree of segments: `true` keeps the whole value. */
export type SelectionTree = Map<string, SelectionTree | true>;

/** A parsed selection. */
export interface FieldSelection {
  /** Normalised paths, in request order, without duplicates (`meta.fields`). */
  readonly fields: readonly string[];
  /** The paths as a tree. */
  readonly tree: SelectionTree;
}

function readRaw(raw: unknown, separator: string): string[] {
  const values = Array.isArray(raw) ? raw.slice(0, FIELD_SELECTION_LIMITS.values) : [raw];
  const parts: string[] = [];
  let budget = FIELD_SELECTION_LIMITS.length;
  for (const value of values) {
    if (typeof value !== "string" || budget <= 0) continue;
    const pieces = value.slice(0, budget).split(separator);
    if (value.length > budget) pieces.pop(); // cut by the bound
    budget -= value.length + 1;
    parts.push(...pieces);
  }
  return parts;
}

function normalise(part: string, settings: FieldSelectionSettings): string[] | undefined {
  const segments = part.trim().split(".").slice(0, settings.maxDepth).map((segment) =>
    segment.trim()
  );
  if (segments.some((segment) => segment === "" || FORBIDDEN.has(segment))) return undefined;
  return segments.join(".").length > settings.maxFieldLength ? undefined : segments;
}

function addPath(tree: SelectionTree, segments: string[]): void {
  let node = tree;
  for (let i = 0; i < segments.length; i++) {
    const current = node.get(segments[i]);
    if (current === true) return; // an ancestor is kept whole
    if (i === segments.length - 1) {
      node.set(segments[i], true);
      return;
    }
    if (current === undefined) node.set(segments[i], node = new Map());
    else node = current;
  }
}

/**
 * Parses the raw query value (a string, or an array) into a bounded selection; empty, too long and
 * prototype paths are dropped, deep ones cut. `undefined` when no field remains.
 * @example
 * ```ts
 * import { parseFieldSelection, resolveFieldSelection } from "@saferoute/api-kit/safe-response";
 * const settings = resolveFieldSelection({ maxDepth: 2 }, "fields")!;
 * parseFieldSelection("id,a.b.c,__proto__.x", settings)?.fields; // ["id", "a.b"]
 * ```
 */
export function parseFieldSelection(
  raw: unknown,
  settings: FieldSelectionSettings,
): FieldSelection | undefined {
  const fields: string[] = [];
  const tree: SelectionTree = new Map();
  for (const part of readRaw(raw, settings.separator)) {
    const segments = normalise(part, settings);
    if (segments === undefined) continue;
    const path = segments.join(".");
    if (fields.includes(path)) continue;
    fields.push(path);
    addPath(tree, segments);
    if (fields.length === settings.maxFields) break;
  }
  return fields.length === 0 ? undefined : { fields, tree };
}

const isEnumerable = (source: object, key: string): boolean =>
  Object.prototype.propertyIsEnumerable.call(source, key);

/**
 * `value` with the selected fields of each object in it, arrays in arrays included. Arrays nest as
 * deep as the data does (a stored `[[[…]]]`), so they are walked with an explicit stack, never by
 * recursion: only objects recurse, as deep as the selection (`maxDepth`). An array met twice is
 * copied once, so shared stays shared and a cycle stays a cycle (for `JSON.stringify` to refuse).
 */
function pick(value: unknown, tree: SelectionTree): unknown {
  if (!Array.isArray(value)) return pickObject(value, tree);
  const copies = new Map<unknown[], unknown[]>();
  const pending: unknown[][] = [];
  const copy = (array: unknown[]): unknown[] => {
    let result = copies.get(array);
    if (result === undefined) {
      // Nested arrays stay as they are here, replaced by their copy when `pending` reaches them.
      // Pushed, not mapped: a packed copy, which JSON.stringify sends as deep as the original (Node
      // 20 serializes the holey arrays of `map` on a slower path, about 40 % fewer levels).
      result = [];
      for (let i = 0; i < array.length; i++) {
        const item = array[i];
        result.push(Array.isArray(item) ? item : pickObject(item, tree));
      }
      // A subclass's copy keeps its class, as an object's does (no constructor runs).
      const prototype = Object.getPrototypeOf(array);
      if (prototype !== Array.prototype) Object.setPrototypeOf(result, prototype);
      copies.set(array, result);
      pending.push(result);
    }
    return result;
  };
  const root = copy(value);
  for (let array = pending.pop(); array !== undefined; array = pending.pop()) {
    const target = array;
    target.forEach((item, index) => {
      if (Array.isArray(item)) target[index] = copy(item);
    });
  }
  return root;
}

/**
 * The selected fields of `value`: only what `JSON.stringify` would send (own enumerable fields), on
 * a copy of the same prototype, so that a serializer running after it (class-transformer's
 * `@Exclude` under `ClassSerializerInterceptor`) still sees the class.
 */
function pickObject(value: unknown, tree: SelectionTree): unknown {
  if (typeof value !== "object" || value === null) return value;
  if (typeof (value as { toJSON?: unknown }).toJSON === "function") return value; // a Date, …
  const source = value as Record<string, unknown>;
  const result = Object.create(Object.getPrototypeOf(source)) as Record<string, unknown>;
  for (const [key, sub] of tree) {
    if (!isEnumerable(source, key)) continue;
    // Defined, not assigned: a setter of the class never runs.
    Object.defineProperty(result, key, {
      value: sub === true ? source[key] : pick(source[key], sub),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return result;
}

/**
 * A copy of `data` with only the selected own enumerable fields (each object copied on its own
 * prototype), item by item in arrays; values with `toJSON` (dates) are kept whole.
 * @example
 * ```ts
 * import { parseFieldSelection, resolveFieldSelection, selectFields } from "@saferoute/api-kit/safe-response";
 * const selection = parseFieldSelection("id,address.city", resolveFieldSelection(true, "fields")!)!;
 * selectFields({ id: 1, name: "Ada", address: { city: "London", zip: "N1" } }, selection);
 * // { id: 1, address: { city: "London" } }
 * ```
 */
export function selectFields(data: unknown, selection: FieldSelection): unknown {
  return pick(data, selection.tree);
}
