/**
 * Every OpenAPI document owns its objects: changing one document (the
 * functions of `./safe-response/openapi`, or `@nestjs/swagger`'s own 3.1
 * conversion) changes neither another document nor the next one built, and
 * the functions work on documents holding the admin routes.
 */
import "reflect-metadata";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { DocumentBuilder, SwaggerModule } from "@nestjs/swagger";
import SwaggerParser from "@apidevtools/swagger-parser";
import {
  applyApiKeysAdminRoutes,
  applyGlobalErrors,
  applyRouteShapes,
  applySchemaNames,
  SAFE_RESPONSE_SCHEMAS,
} from "../../../safe_response/openapi/mod.ts";
import { openApiModule, openApiOptions } from "./openapi_app.ts";
import { boot } from "../nest/helpers.ts";
import type { Json } from "./openapi_validation.ts";

/** The `$ref` targets of `document` missing from its components. */
function dangling(document: Json): string[] {
  const names = new Set(Object.keys(document.components?.schemas ?? {}));
  const targets = [...JSON.stringify(document).matchAll(/"#\/components\/schemas\/(\w+)"/g)]
    .map((match) => match[1]);
  return [...new Set(targets)].filter((name) => !names.has(name));
}

describe("each document owns its objects", () => {
  it("Nest documents: renaming, shapes and a 3.1 build leave the next document as the first", async () => {
    const running = await boot(openApiModule("envelope"), "express");
    try {
      const build = (version?: string) => {
        let builder = new DocumentBuilder().setTitle("t").setVersion("1");
        if (version !== undefined) builder = builder.setOpenAPIVersion(version);
        return applyGlobalErrors(
          SwaggerModule.createDocument(running.app, builder.build()),
          openApiOptions("envelope"),
        ) as Json;
      };
      const first = JSON.stringify(build());
      const renamed = applySchemaNames(build(), { schemaNames: "dto" });
      assert.deepEqual(dangling(renamed), []);
      applyRouteShapes(build(), { shapes: "0.14" });
      applyGlobalErrors(build(), { ...openApiOptions("envelope"), validationDetails: "fields" });
      const v31 = build("3.1.0");
      assert.equal(JSON.stringify(v31).includes('"nullable"'), false);
      const later = build();
      assert.deepEqual(dangling(later), []);
      assert.equal(JSON.stringify(later), first);
      await SwaggerParser.validate(later);
      assert.deepEqual(SAFE_RESPONSE_SCHEMAS.SafePaginationLinks.properties, {
        self: { type: "string" },
        first: { type: "string" },
        prev: { type: "string", nullable: true },
        next: { type: "string", nullable: true },
        last: { type: "string", nullable: true },
      });
    } finally {
      await running.close();
    }
  });

  it("admin routes: applySchemaNames renames their components and every $ref", () => {
    const document: Json = applyApiKeysAdminRoutes({ paths: {} }, { prefix: "/admin" });
    applySchemaNames(document, { schemaNames: "dto" });
    const json = JSON.stringify(document);
    assert.equal(json.includes('#/components/schemas/SafeErrorResponse"'), false);
    assert.equal(json.includes('#/components/schemas/SafeErrorBody"'), false);
    assert.deepEqual(dangling(document), []);
    assert.equal(JSON.stringify(SAFE_RESPONSE_SCHEMAS).includes("Dto"), false);
  });

  it("admin routes: applyRouteShapes writes each status's own example, in its document only", () => {
    const fresh = JSON.stringify(applyApiKeysAdminRoutes({ paths: {} }, { prefix: "/x" }));
    const shaped: Json = applyRouteShapes(
      applyApiKeysAdminRoutes({ paths: {} }, { prefix: "/y" }),
      { shapes: "0.14" },
    );
    const statusExample = (status: number) =>
      shaped.paths["/y/keys/{id}"].patch.responses[status].content["application/json"].schema
        .allOf[1].properties.statusCode.example;
    for (const status of [403, 404, 409]) assert.equal(statusExample(status), status);
    assert.equal(JSON.stringify(applyApiKeysAdminRoutes({ paths: {} }, { prefix: "/x" })), fresh);
  });

  it("admin routes: changing one response changes no other response nor document", () => {
    const first: Json = applyApiKeysAdminRoutes({ paths: {} }, { prefix: "/one" });
    const second: Json = applyApiKeysAdminRoutes({ paths: {} }, { prefix: "/one" });
    const before = JSON.stringify(second);
    const post = first.paths["/one/keys"].post.responses;
    post[400].content["application/json"].schema = { type: "object" };
    first.components.schemas.ApiKeysAdminKeyView.properties.id.type = "integer";
    first.components.schemas.SafeErrorResponse.properties.success = {};
    assert.deepEqual(post[403].content["application/json"].schema, {
      $ref: "#/components/schemas/SafeErrorResponse",
    });
    assert.equal(JSON.stringify(second), before);
    assert.equal(
      JSON.stringify(applyApiKeysAdminRoutes({ paths: {} }, { prefix: "/one" })),
      before,
    );
  });
});
