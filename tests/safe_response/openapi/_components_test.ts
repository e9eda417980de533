import "reflect-metadata";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { DECORATORS } from "@nestjs/swagger";
import { ApiSafeComponents } from "../../../safe_response/openapi/_components.ts";
import { SAFE_RESPONSE_SCHEMAS } from "../../../safe_response/_openapi_schemas.ts";

describe("ApiSafeComponents", () => {
  it("registers one model per component schema, named after it, carrying exactly its schema", () => {
    class Routes {}
    ApiSafeComponents()(Routes);
    const models: object[] = Reflect.getMetadata(DECORATORS.API_EXTRA_MODELS, Routes);
    const registered = Object.fromEntries(models.map((model) => {
      const [{ name, properties: _empty, ...schema }] = Reflect.getMetadata(
        DECORATORS.API_SCHEMA,
        model,
      );
      return [name, schema];
    }));
    assert.deepEqual(Object.keys(registered).sort(), Object.keys(SAFE_RESPONSE_SCHEMAS).sort());
    for (const [name, schema] of Object.entries(SAFE_RESPONSE_SCHEMAS)) {
      const { properties: _properties, ...rest } = schema as Record<string, unknown>;
      assert.deepEqual(registered[name], rest, name);
    }
  });
});
