/**
 * Registration of the named component schemas with `@nestjs/swagger`.
 *
 * @module
 */
import { ApiExtraModels, ApiSchema, type ApiSchemaOptions } from "@nestjs/swagger";
import { documentCopy, SAFE_RESPONSE_SCHEMAS } from "../_openapi_schemas.ts";

/**
 * One property-less model class per component. `@nestjs/swagger` writes a
 * model as `{ type: "object", properties: {}, ...ApiSchema options }`, so the
 * options carry the whole schema and the component is exactly the JSON of
 * {@link SAFE_RESPONSE_SCHEMAS} (checked by the OpenAPI snapshot test). The
 * options are read once per document (`{ name, ...schema }`), each read giving
 * fresh copies: the document owns them, so its later changes (the 3.1
 * conversion, `applySchemaNames`) reach no other document.
 */
const MODELS = Object.entries(SAFE_RESPONSE_SCHEMAS).map(([name, schema]) => {
  const model = class {};
  const options = { name } as ApiSchemaOptions;
  for (const [key, value] of Object.entries(schema)) {
    Object.defineProperty(options, key, { enumerable: true, get: () => documentCopy(value) });
  }
  ApiSchema(options)(model);
  return model;
});

/** Registers every component schema (idempotent: a document holds each once). */
export function ApiSafeComponents(): MethodDecorator & ClassDecorator {
  return ApiExtraModels(...MODELS);
}
