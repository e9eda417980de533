/**
 * Test helpers: look up what an OpenAPI 3.0 document declares for a response
 * and validate bodies against it with Ajv (`$ref`s resolved against
 * `components.schemas`, `nullable` supported).
 */
import { Ajv } from "ajv";
import addFormats from "ajv-formats";

// deno-lint-ignore no-explicit-any
export type Json = any;

const COMPONENTS = "openapi.json";

/** `$ref`s to `components.schemas` rewritten to the Ajv schema holding them. */
function rewriteRefs(schema: Json): Json {
  return JSON.parse(
    JSON.stringify(schema).replaceAll('"#/components/schemas/', `"${COMPONENTS}#/definitions/`),
  );
}

/** Validates bodies against schemas of `document`; returns Ajv's errors (empty when valid). */
export function bodyValidator(document: Json): (schema: Json, body: unknown) => string[] {
  const ajv = new Ajv({ strict: false, allErrors: true });
  (addFormats as unknown as (ajv: Ajv) => void)(ajv);
  ajv.addSchema({ $id: COMPONENTS, definitions: rewriteRefs(document.components.schemas) });
  return (schema, body) => {
    const validate = ajv.compile(rewriteRefs(schema));
    if (validate(body)) return [];
    return (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message}`);
  };
}

/** The path template of `document` that `path` (without query) matches. */
export function pathTemplate(document: Json, path: string): string {
  const pathname = path.split("?")[0];
  const template = Object.keys(document.paths).find((candidate) =>
    new RegExp(`^${candidate.replace(/\{[^}]+\}/g, "[^/]+")}$`).test(pathname)
  );
  if (template === undefined) throw new Error(`no documented path for ${path}`);
  return template;
}

/** The response object documented for `status`, or `undefined`. */
export function documentedResponse(
  document: Json,
  template: string,
  method: string,
  status: number,
): Json {
  return document.paths[template]?.[method.toLowerCase()]?.responses?.[status];
}
