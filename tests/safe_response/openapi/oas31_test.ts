/**
 * OpenAPI 3.1 documents: what `applyGlobalErrors`, `applyRouteShapes` and
 * `applyApiKeysAdminRoutes` add is 3.1 too (`type: [T, "null"]`, never 3.0's
 * `nullable`), as `@nestjs/swagger` writes its own schemas; 3.0 documents
 * keep `nullable`.
 */
import "reflect-metadata";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Controller, Get, Module } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import { DocumentBuilder, SwaggerModule } from "@nestjs/swagger";
import SwaggerParser from "@apidevtools/swagger-parser";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { SafeResponse } from "../../../safe_response/nest/mod.ts";
import {
  applyApiKeysAdminRoutes,
  applyGlobalErrors,
  applyRouteShapes,
} from "../../../safe_response/openapi/mod.ts";
import { documentCopy } from "../../../safe_response/_openapi_schemas.ts";
import type { Json } from "./openapi_validation.ts";

@Controller("ping")
class PingController {
  @Get()
  @SafeResponse()
  ping() {
    return "pong";
  }
}

@Module({ controllers: [PingController] })
class PingModule {}

async function nestDocument(version: string): Promise<Json> {
  const app = await NestFactory.create(PingModule, { logger: false });
  try {
    await app.init();
    const config = new DocumentBuilder().setTitle("t").setVersion("1")
      .setOpenAPIVersion(version).build();
    return SwaggerModule.createDocument(app, config);
  } finally {
    await app.close();
  }
}

/** The JSON pointers of every schema object of `document` with a `nullable` keyword. */
function nullables(node: Json, at = "#"): string[] {
  if (typeof node !== "object" || node === null) return [];
  const found = Object.hasOwn(node, "nullable") && !at.endsWith("/properties") ? [at] : [];
  for (const [key, value] of Object.entries(node)) {
    if (key !== "example" && key !== "examples") found.push(...nullables(value, `${at}/${key}`));
  }
  return found;
}

/** A JSON Schema 2020-12 validator (3.1's dialect) of the components of `document`. */
function validator(document: Json): (name: string, value: unknown) => boolean {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormats as unknown as (ajv: Ajv2020) => void)(ajv);
  const schemas = JSON.parse(
    JSON.stringify(document.components.schemas).replaceAll(
      '"#/components/schemas/',
      '"c.json#/$defs/',
    ),
  );
  ajv.addSchema({ $id: "c.json", $defs: schemas });
  return (name, value) => ajv.validate({ $ref: `c.json#/$defs/${name}` }, value);
}

const VIEW = {
  id: "k",
  name: "n",
  environment: "live",
  prefix: "p",
  scopes: [],
  allowedIpCidrs: [],
  status: "active",
  createdAt: "2030-01-01T00:00:00.000Z",
  lastUsedAt: null,
  expiresAt: null,
  revokedAt: null,
  rotatedAt: null,
  replacedByKeyId: null,
  replacesKeyId: null,
  createdBy: null,
};

describe("OpenAPI 3.1 documents", () => {
  it("applyGlobalErrors, applyRouteShapes and the admin routes add 3.1 schemas", async () => {
    const document = applyApiKeysAdminRoutes(
      applyRouteShapes(
        applyGlobalErrors(await nestDocument("3.1.0"), { swagger: { globalErrors: [500] } }),
        { shapes: "0.14" },
      ),
      { prefix: "/admin" },
    ) as Json;
    assert.equal(document.openapi, "3.1.0");
    assert.deepEqual(nullables(document), []);
    assert.deepEqual(document.components.schemas.SafePaginationLinks.properties.prev, {
      type: ["string", "null"],
    });
    const valid = validator(document);
    assert.equal(valid("ApiKeysAdminKeyView", VIEW), true);
    assert.equal(valid("ApiKeysAdminKeyView", { ...VIEW, lastUsedAt: 1 }), false);
    assert.equal(
      valid("ApiKeysAdminKeyList", {
        keys: [VIEW],
        nextCursor: null,
        capabilities: { rename: true, conditionalRename: true, usage: false },
        tenantCredits: null,
      }),
      true,
    );
    assert.equal(
      valid("SafePaginationLinks", { self: "/a", first: "/a", prev: null, next: null, last: null }),
      true,
    );
    await SwaggerParser.validate(structuredClone(document));
  });

  it("on plain 3.1 objects too; 3.0 documents keep nullable", async () => {
    const v31 = applyGlobalErrors(
      applyApiKeysAdminRoutes({ openapi: "3.1.1", paths: {} } as Json, { prefix: "/a" }),
      { swagger: { globalErrors: [400] } },
    ) as Json;
    assert.deepEqual(nullables(v31), []);
    assert.deepEqual(v31.components.schemas.ApiKeysAdminKeyList.properties.tenantCredits.type, [
      "object",
      "null",
    ]);
    const v30 = applyGlobalErrors(
      applyApiKeysAdminRoutes(await nestDocument("3.0.0"), { prefix: "/a" }),
      { swagger: { globalErrors: [400] } },
    ) as Json;
    assert.notDeepEqual(nullables(v30), []);
    assert.deepEqual(v30.components.schemas.SafePaginationLinks.properties.prev, {
      type: "string",
      nullable: true,
    });
    await SwaggerParser.validate(structuredClone(v30));
  });

  it("a nullable schema with a $ref or combinator admits null and keeps every other keyword", () => {
    const A = { type: "object", properties: { x: { type: "integer" } }, required: ["x"] };
    // [OpenAPI 3.0 schema, values it admits, values it refuses]
    const cases: Array<[Json, unknown[], unknown[]]> = [
      [{ type: "object", allOf: [{ $ref: "#/$defs/A" }], nullable: true }, [null, { x: 1 }], [
        {},
        "s",
        { x: "1" },
      ]],
      [
        {
          allOf: [{ $ref: "#/$defs/A" }],
          anyOf: [{ required: ["y"] }, { required: ["z"] }],
          nullable: true,
        },
        [null, { x: 1, y: 1 }, { x: 1, z: 1 }],
        [{ x: 1 }, { y: 1 }],
      ],
      [
        { type: "object", oneOf: [{ $ref: "#/$defs/A" }], minProperties: 2, nullable: true },
        [null, { x: 1, y: 2 }],
        [{ x: 1 }, 3],
      ],
      [{ $ref: "#/$defs/A", description: "An A", nullable: true }, [null, { x: 1 }], [{}]],
      [{ type: "string", enum: ["a"], nullable: true }, [null, "a"], ["b"]],
    ];
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    for (const [schema, admitted, refused] of cases) {
      const converted = documentCopy(schema, { openapi: "3.1.0" });
      const label = `${JSON.stringify(schema)} -> ${JSON.stringify(converted)}`;
      assert.deepEqual(nullables(converted), [], label);
      const validate = ajv.compile({ ...converted, $defs: { A } });
      for (const value of admitted) assert.equal(validate(value), true, `${label} admits ${value}`);
      for (const value of refused) {
        assert.equal(validate(value), false, `${label} refuses ${JSON.stringify(value)}`);
      }
      assert.deepEqual(documentCopy(schema, { openapi: "3.0.3" }), schema, "3.0: as it was");
    }
    const described = documentCopy({ $ref: "#/$defs/A", description: "An A", nullable: true }, {
      openapi: "3.1.0",
    });
    assert.equal(described.description, "An A", "annotations stay on the outer schema");
  });
});
