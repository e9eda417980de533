/**
 * The envelope's own meta fields (`SafeResponseMeta`, `SafeErrorMeta`): a context field of one of
 * these names would put a store value of any type where the schema documents the module's own.
 * @module
 */

const BUILT_IN_META_FIELDS: ReadonlySet<string> = new Set([
  "pagination",
  "message",
  "responseTime",
  "sort",
  "filters",
  "deprecation",
  "rateLimit",
  "apiVersion",
  "fields",
]);

/** Whether a context field may be named `name`: not a built-in meta field, nor `__proto__`. */
export function isContextFieldName(name: string): boolean {
  return !BUILT_IN_META_FIELDS.has(name) && name !== "__proto__";
}
