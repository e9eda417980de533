/**
 * The OpenAPI document of the test app (every documentation decorator and
 * composite): valid OpenAPI 3 (`@apidevtools/swagger-parser`), identical on
 * Express and Fastify, and equal to the reviewed snapshots in
 * `fixtures/openapi-<mode>.json` (`UPDATE_SNAPSHOTS=1` rewrites them). Plus
 * the decorators' own rules.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import process from "node:process";
import { Controller, Get, Module, Post } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import { ApiOperation, ApiQuery, DocumentBuilder, SwaggerModule } from "@nestjs/swagger";
import SwaggerParser from "@apidevtools/swagger-parser";
import {
  CursorPaginated,
  Deprecated,
  Paginated,
  SafeResponse,
} from "../../../safe_response/nest/mod.ts";
import {
  ApiSafeErrorResponse,
  ApiSafeErrorResponses,
  ApiSafeProblemResponse,
  ApiSafeResponse,
  SAFE_RESPONSE_SCHEMAS,
  SafeEndpoint,
  SafePaginatedEndpoint,
} from "../../../safe_response/openapi/mod.ts";
import { ItemDto, MODES, openApiDocument, openApiModule } from "./openapi_app.ts";
import { ADAPTERS, boot } from "../nest/helpers.ts";
import type { Json } from "./openapi_validation.ts";

const snapshot = (mode: string) => new URL(`./fixtures/openapi-${mode}.json`, import.meta.url);

async function documentOf(controller: new () => unknown): Promise<Json> {
  @Module({ controllers: [controller] })
  class DocModule {}
  const app = await NestFactory.create(DocModule, { logger: false });
  try {
    await app.init();
    return SwaggerModule.createDocument(app, new DocumentBuilder().build());
  } finally {
    await app.close();
  }
}

for (const mode of MODES) {
  describe(`OpenAPI document, ${mode} mode`, () => {
    it("is valid OpenAPI 3, the same on both adapters, and matches the snapshot", async () => {
      const documents: Json[] = [];
      for (const adapter of ADAPTERS) {
        const running = await boot(openApiModule(mode), adapter);
        try {
          documents.push(openApiDocument(running.app, mode));
        } finally {
          await running.close();
        }
      }
      const [express, fastify] = documents;
      assert.deepEqual(fastify, express);
      await SwaggerParser.validate(structuredClone(express));
      const text = `${JSON.stringify(express, null, 2)}\n`;
      if (process.env.UPDATE_SNAPSHOTS === "1") await writeFile(snapshot(mode), text);
      assert.deepEqual(express, JSON.parse(await readFile(snapshot(mode), "utf8")));
    });

    it("registers the named component schemas exactly once, as documented", async () => {
      const running = await boot(openApiModule(mode), "express");
      try {
        const { components } = openApiDocument(running.app, mode) as Json;
        for (const [name, schema] of Object.entries(SAFE_RESPONSE_SCHEMAS)) {
          assert.deepEqual(components.schemas[name], schema, name);
        }
        const names = Object.keys(components.schemas);
        assert.deepEqual(names.filter((name) => !name.startsWith("Safe")), ["ItemDto"]);
      } finally {
        await running.close();
      }
    });
  });
}

describe("OpenAPI decorators", () => {
  it("Paginated and CursorPaginated document their query parameters, on routes or controllers", async () => {
    @Controller("p")
    @Paginated({ maxLimit: 9 })
    class PagedController {
      @Get("a")
      a() {}

      @Get("b")
      @CursorPaginated({ defaultLimit: 4 })
      b() {}

      @Get("c")
      @ApiQuery({ name: "limit", description: "mine", required: false })
      c() {}
    }
    const { paths } = await documentOf(PagedController);
    const parameters = (path: string) =>
      Object.fromEntries(
        (paths[path].get.parameters as Json[]).map((parameter) => [parameter.name, parameter]),
      );
    const a = parameters("/p/a");
    assert.deepEqual(Object.keys(a).sort(), ["limit", "page"]);
    assert.deepEqual(a.page.schema, {
      type: "integer",
      minimum: 1,
      maximum: Number.MAX_SAFE_INTEGER,
      default: 1,
    });
    assert.deepEqual(a.limit.schema, { type: "integer", minimum: 1, maximum: 9 });
    assert.match(a.limit.description, /clamped to 9\. Default: the module's `defaultLimit`/);
    const b = parameters("/p/b");
    assert.deepEqual(Object.keys(b).sort(), ["cursor", "limit"]);
    assert.deepEqual(b.cursor.schema, { type: "string", maxLength: 512 });
    assert.deepEqual(b.limit.schema, { type: "integer", minimum: 1, maximum: 100, default: 4 });
    assert.match(
      b.limit.description,
      /clamped to 100\. Default 4\./,
      "a default implies a largest",
    );
    const c = parameters("/p/c");
    assert.equal(c.limit.description, "mine");
    assert.equal(c.page.schema.default, 1);
  });

  it("marks deprecated operations without losing @ApiOperation fields, in any order", async () => {
    @Controller("d")
    class DeprecatedController {
      @Get("a")
      @ApiOperation({ summary: "A" })
      @Deprecated()
      a() {}

      @Get("b")
      @Deprecated()
      @ApiOperation({ summary: "B" })
      b() {}

      @Get("c")
      c() {}
    }
    const { paths } = await documentOf(DeprecatedController);
    assert.equal(paths["/d/a"].get.summary, "A");
    assert.equal(paths["/d/a"].get.deprecated, true);
    assert.equal(paths["/d/b"].get.summary, "B");
    assert.equal(paths["/d/b"].get.deprecated, true);
    assert.equal(paths["/d/c"].get.deprecated, undefined);
  });

  it("resolves codes from the default map, else the fallback, and groups one status", async () => {
    @Controller("e")
    class ErrorsController {
      @Get()
      @ApiSafeErrorResponse(429)
      @ApiSafeErrorResponse(410, { description: "Removed", details: { since: "2025" } })
      @ApiSafeErrorResponses([404, { status: 404, code: "ORG_NOT_FOUND", message: "No org" }])
      @ApiSafeProblemResponse(418)
      get() {}
    }
    const { responses } = (await documentOf(ErrorsController)).paths["/e"].get;
    const examples = (status: number, type = "application/json") =>
      responses[status].content[type].examples;
    assert.deepEqual(examples(429).TOO_MANY_REQUESTS.value, {
      success: false,
      statusCode: 429,
      error: { code: "TOO_MANY_REQUESTS", message: "Too Many Requests" },
    });
    assert.equal(responses[410].description, "Removed");
    assert.deepEqual(examples(410).GONE.value.error, {
      code: "GONE",
      message: "Gone",
      details: { since: "2025" },
    });
    assert.deepEqual(Object.keys(examples(404)), ["NOT_FOUND", "ORG_NOT_FOUND"]);
    assert.equal(examples(404).ORG_NOT_FOUND.value.error.message, "No org");
    assert.deepEqual(examples(418, "application/problem+json").I_AM_A_TEAPOT.value, {
      type: "about:blank",
      title: "I'm a Teapot",
      status: 418,
      detail: "I'm a Teapot",
      instance: "/",
      code: "I_AM_A_TEAPOT",
    });
  });

  it("documents composites at their runtime status", async () => {
    @Controller("s")
    class StatusController {
      @Post("created")
      @SafeEndpoint(ItemDto, { statusCode: 201 })
      created() {}

      @Post("default")
      @SafeEndpoint(ItemDto)
      byDefault() {}

      @Post("search")
      @SafePaginatedEndpoint(ItemDto)
      search() {}

      @Post("basic")
      @SafeResponse()
      basic() {}
    }
    const { paths } = await documentOf(StatusController);
    assert.deepEqual(Object.keys(paths["/s/created"].post.responses), ["201"]);
    assert.deepEqual(Object.keys(paths["/s/default"].post.responses), ["200"]);
    assert.deepEqual(Object.keys(paths["/s/search"].post.responses), ["200"]);
    assert.deepEqual(Object.keys(paths["/s/basic"].post.responses), ["200"]);
  });

  it("rejects bad statuses, codes and models when applied", () => {
    assert.throws(() => ApiSafeErrorResponse(200), /ApiSafeErrorResponse: `status`/);
    assert.throws(() => ApiSafeProblemResponse(600), /ApiSafeProblemResponse: `status`/);
    assert.throws(() => ApiSafeErrorResponses([404, 302]), /ApiSafeErrorResponses: `status`/);
    assert.throws(() => ApiSafeErrorResponse(404, { code: "" }), /`code` must be a non-empty/);
    assert.throws(() => ApiSafeResponse(ItemDto, { statusCode: 99 }), /ApiSafeResponse/);
    assert.throws(
      () => ApiSafeResponse(undefined as unknown as typeof ItemDto),
      /ApiSafeResponse: `model` must be a class/,
    );
    assert.throws(
      () => SafeEndpoint(ItemDto, { errors: [{ status: 99 }] }),
      /SafeEndpoint: `status`/,
    );
  });
});
