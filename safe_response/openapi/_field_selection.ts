/**
 * The document of a route with field selection (`?fields=`): the server drops properties of `data`
 * (of each item, at any depth), so `data` points at a copy of its model without `required`.
 * @module
 */
import { fieldSelectionParameter } from "../_route_decorators.ts";
import type { FieldSelectionSettings } from "../field_selection.ts";

const SCHEMA_REF = "#/components/schemas/";
const SUCCESS_REF = SCHEMA_REF + "SafeSuccessResponse";
/** Marks a derived `<Model>Selection` component with the name of its model. */
const SELECTION_OF = "x-safe-selection-of";

type Schemas = Record<string, object>;
type Node = Record<string, unknown>;

/**
 * Documents field selection on `operation`: every success envelope's `data` without `required`
 * (`<Model>Selection` components added to `schemas`), and, when `parameter` is given (the module's
 * option), its query parameter. Throws a `TypeError` when the application has a component of a
 * derived name. Idempotent.
 */
export function documentFieldSelection(
  operation: { responses?: Record<string, unknown>; parameters?: unknown },
  schemas: Schemas,
  parameter: FieldSelectionSettings | undefined,
): void {
  let envelope = false;
  for (const [status, response] of Object.entries(operation.responses ?? {})) {
    if (!/^2\d\d$/.test(status)) continue;
    const schema = (response as { content?: Record<string, { schema?: Node }> })
      ?.content?.["application/json"]?.schema;
    const parts = (schema?.allOf ?? [schema]) as Array<Node | undefined>;
    const success = parts.some((part) => part?.$ref === SUCCESS_REF) ||
      (schema?.properties as Node | undefined)?.success !== undefined;
    if (!success) continue;
    envelope = true;
    for (const part of parts) {
      const properties = part?.properties as Node | undefined;
      if (properties?.data !== undefined) properties.data = optional(properties.data, schemas);
    }
  }
  if (!envelope || parameter === undefined) return;
  const parameters = (operation.parameters ??= []) as Array<{ in?: string; name?: string }>;
  const { name } = fieldSelectionParameter(parameter);
  if (parameters.some((given) => given.in === "query" && given.name === name)) return;
  parameters.push({ in: "query", ...fieldSelectionParameter(parameter) });
}

/** A copy of the schema `node` without `required`, its `$ref`s pointing at `<Model>Selection`. */
function optional(node: unknown, schemas: Schemas): unknown {
  if (Array.isArray(node)) return node.map((item) => optional(item, schemas));
  if (typeof node !== "object" || node === null) return node;
  const copy: Node = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "required" && Array.isArray(value)) continue;
    if (key === "$ref" && typeof value === "string") copy[key] = selectionRef(value, schemas);
    else if (["example", "examples", "default", "enum", "const"].includes(key)) copy[key] = value;
    else if (key === "properties" && typeof value === "object" && value !== null) {
      copy[key] = Object.fromEntries(
        Object.entries(value).map(([name, schema]) => [name, optional(schema, schemas)]),
      );
    } else copy[key] = optional(value, schemas);
  }
  return copy;
}

/** The `$ref` of the `<Model>Selection` of the component `ref` points at (added when missing). */
function selectionRef(ref: string, schemas: Schemas): string {
  if (!ref.startsWith(SCHEMA_REF)) return ref;
  const model = ref.slice(SCHEMA_REF.length);
  const target = schemas[model] as Node | undefined;
  if (target === undefined || target[SELECTION_OF] !== undefined) return ref; // already derived
  const name = `${model}Selection`;
  const existing = schemas[name] as Node | undefined;
  if (existing === undefined) {
    schemas[name] = { [SELECTION_OF]: model }; // first, so a cycle ends here
    schemas[name] = { ...optional(target, schemas) as Node, [SELECTION_OF]: model };
  } else if (existing[SELECTION_OF] !== model) {
    throw new TypeError(
      `applyGlobalErrors: the document already has a component \`${name}\` (rename it); ` +
        `field selection documents \`${model}\` without \`required\` under that name`,
    );
  }
  return SCHEMA_REF + name;
}
