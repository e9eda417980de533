/**
 * `applyGlobalErrors`: every operation but the skipped ones, never over a
 * route-level response, same document returned, idempotent, `errorCodes` and
 * `problemDetails` applied, missing components added, options validated.
 * `applySchemaNames`: the component names of `@nestarc/safe-response`. `applyRouteShapes`: its 0.14
 * route schema shapes, on real `@nestjs/swagger` output.
 */
import { describe, it } from "node:test";
import { readFile } from "node:fs/promises";
import assert from "node:assert/strict";
import {
  Controller,
  Delete,
  ForbiddenException,
  Get,
  HttpCode,
  Module,
  NotFoundException,
  Post,
  Put,
  type Type,
} from "@nestjs/common";
import { ApiKeysService, InMemoryApiKeyStorage } from "../../../api_keys/mod.ts";
import { ApiKeysModule } from "../../../api_keys/nest/mod.ts";
import { guardedAdminController } from "../../api_keys/nest/test_app.ts";
import { defineErrors, SafeException } from "../../../safe_response/mod.ts";
import { NestFactory } from "@nestjs/core";
import { DocumentBuilder, SwaggerModule } from "@nestjs/swagger";
import SwaggerParser from "@apidevtools/swagger-parser";
import { ApiProperty } from "@nestjs/swagger";
import {
  CursorPaginated,
  Deprecated,
  FieldSelection,
  Paginated,
  PaginationQuery,
  ProblemType,
  SafeResponse,
  SafeResponseModule,
  type SafeResponseModuleOptions,
  SkipGlobalErrors,
} from "../../../safe_response/nest/mod.ts";
import type {
  CursorPaginationQuery,
  OffsetPaginationQuery,
} from "../../../safe_response/pagination_query.ts";
import {
  ApiSafeCatalogErrors,
  ApiSafeErrorResponse,
  ApiSafeResponse,
  applyApiKeysAdminRoutes,
  SAFE_RESPONSE_SCHEMAS,
  SafeEndpoint,
  SafePaginatedEndpoint,
} from "../../../safe_response/openapi/mod.ts";
import {
  applyGlobalErrors,
  applyRouteShapes,
  applySchemaNames,
} from "../../../safe_response/openapi/safe_response.document.ts";
import { bodyValidator, type Json } from "./openapi_validation.ts";
import { boot, type RunningApp } from "../nest/helpers.ts";

@Controller("a")
class RoutesController {
  @Get("plain")
  @SafeResponse()
  plain() {}

  @Get("own")
  @ApiSafeErrorResponse(404, { code: "ITEM_NOT_FOUND", message: "No such item" })
  own() {}

  @Get("skipped")
  @SkipGlobalErrors()
  skipped() {}
}

@Controller("b")
@SkipGlobalErrors()
class SkippedController {
  @Get()
  list() {}
}

@Module({ controllers: [RoutesController, SkippedController] })
class GlobalErrorsModule {}

async function nestDocument(): Promise<Json> {
  const app = await NestFactory.create(GlobalErrorsModule, { logger: false });
  try {
    await app.init();
    return SwaggerModule.createDocument(app, new DocumentBuilder().build());
  } finally {
    await app.close();
  }
}

const OPTIONS: SafeResponseModuleOptions = {
  errorCodes: { 401: "AUTH_REQUIRED" },
  swagger: {
    globalErrors: [401, 404, { status: 500, message: "Unexpected" }, {
      status: 500,
      code: "UPSTREAM_DOWN",
      description: "Upstream down",
    }],
  },
};

describe("applyGlobalErrors", () => {
  it("adds the errors to every operation except skipped ones and returns the document", async () => {
    const document = await nestDocument();
    assert.equal(applyGlobalErrors(document, OPTIONS), document);
    const { paths } = document;
    assert.deepEqual(Object.keys(paths["/a/plain"].get.responses), ["200", "401", "404", "500"]);
    assert.deepEqual(Object.keys(paths["/a/skipped"].get.responses), ["200"]);
    assert.deepEqual(Object.keys(paths["/b"].get.responses), ["200"]);
    const unauthorized = paths["/a/plain"].get.responses[401].content["application/json"];
    assert.deepEqual(unauthorized.schema, { $ref: "#/components/schemas/SafeErrorResponse" });
    assert.deepEqual(unauthorized.examples.AUTH_REQUIRED.value, {
      success: false,
      statusCode: 401,
      error: { code: "AUTH_REQUIRED", message: "Unauthorized" },
    });
    const failure = paths["/a/plain"].get.responses[500];
    assert.equal(failure.description, "Internal Server Error\n\nUpstream down");
    assert.deepEqual(Object.keys(failure.content["application/json"].examples), [
      "INTERNAL_SERVER_ERROR",
      "UPSTREAM_DOWN",
    ]);
    await SwaggerParser.validate(structuredClone(document));
  });

  it("never overwrites a route-level response of the same status", async () => {
    const document = await nestDocument();
    const own = structuredClone(document.paths["/a/own"].get.responses[404]);
    applyGlobalErrors(document, OPTIONS);
    assert.deepEqual(document.paths["/a/own"].get.responses[404], own);
    assert.ok(document.paths["/a/own"].get.responses[401]);
  });

  it("is idempotent: a second application changes nothing", async () => {
    const document = applyGlobalErrors(await nestDocument(), OPTIONS);
    const once = structuredClone(document);
    assert.deepEqual(applyGlobalErrors(document, OPTIONS), once);
  });

  it("keeps no state between applications: a second app's document gets only its own errors", async () => {
    applyGlobalErrors(await nestDocument(), OPTIONS);
    const second = applyGlobalErrors(await nestDocument(), { swagger: { globalErrors: [503] } });
    assert.deepEqual(Object.keys(second.paths["/a/plain"].get.responses), ["200", "503"]);
  });

  it("documents problem details with baseUrl-derived types", async () => {
    const document = applyGlobalErrors(await nestDocument(), {
      problemDetails: { baseUrl: "https://errors.example.com/" },
      swagger: { globalErrors: [{ status: 403, message: "Denied", details: { scope: "x" } }] },
    });
    const content = document.paths["/a/plain"].get.responses[403].content;
    assert.deepEqual(Object.keys(content), ["application/problem+json"]);
    assert.deepEqual(content["application/problem+json"].schema, {
      $ref: "#/components/schemas/SafeProblemDetails",
    });
    assert.deepEqual(content["application/problem+json"].examples.FORBIDDEN.value, {
      type: "https://errors.example.com/forbidden",
      title: "Forbidden",
      status: 403,
      detail: "Denied",
      instance: "/",
      code: "FORBIDDEN",
      details: { scope: "x" },
    });
  });

  it("adds the missing component schemas to a bare document, keeping existing ones", async () => {
    const mine = { type: "object", description: "user-defined" };
    const document: Json = {
      openapi: "3.0.0",
      info: { title: "bare", version: "1" },
      paths: { "/ping": { parameters: [], get: { responses: { 200: { description: "OK" } } } } },
      components: { schemas: { SafeErrorBody: mine } },
    };
    applyGlobalErrors(document, { swagger: { globalErrors: [503] } });
    assert.deepEqual(document.components.schemas.SafeErrorBody, mine);
    for (const name of Object.keys(SAFE_RESPONSE_SCHEMAS).filter((n) => n !== "SafeErrorBody")) {
      assert.deepEqual(document.components.schemas[name], SAFE_RESPONSE_SCHEMAS[name as never]);
    }
    assert.deepEqual(Object.keys(document.paths["/ping"].get.responses), ["200", "503"]);
    await SwaggerParser.validate(structuredClone(document));
  });

  it("leaves a document without global errors untouched and validates options", async () => {
    const document = await nestDocument();
    const before = structuredClone(document);
    assert.deepEqual(applyGlobalErrors(document, {}), before);
    assert.deepEqual(applyGlobalErrors(document), before);
    assert.throws(
      () => applyGlobalErrors(document, { swagger: { globalErrors: [200] } }),
      /swagger\.globalErrors/,
    );
    assert.throws(
      () => applyGlobalErrors(document, { swagger: { globalErrors: [{ status: 404, code: "" }] } }),
      /applyGlobalErrors: `code`/,
    );
  });
});

/** Component names of `@nestarc/safe-response` 0.14, by ours (docs/migration.md). */
const DTO_NAMES = {
  SafePaginationLinks: "PaginationLinksDto",
  SafePaginationMeta: "PaginationMetaDto",
  SafeCursorPaginationMeta: "CursorPaginationMetaDto",
  SafeSortInfo: "SortMetaDto",
  SafeDeprecationMeta: "DeprecationMetaDto",
  SafeRateLimitMeta: "RateLimitMetaDto",
  SafeResponseMeta: "ResponseMetaDto",
  SafeErrorMeta: "ErrorResponseMetaDto",
  SafeSuccessResponse: "SafeSuccessResponseDto",
  SafeErrorBody: "ErrorDetailDto",
  SafeErrorResponse: "SafeErrorResponseDto",
  SafeProblemDetails: "ProblemDetailsDto",
};

/** `value` with every `$ref` to one of our components pointing at its DTO name instead. */
function dtoRefs(value: Json): Json {
  let text = JSON.stringify(value);
  for (const [ours, dto] of Object.entries(DTO_NAMES)) {
    text = text.replaceAll(`"#/components/schemas/${ours}"`, `"#/components/schemas/${dto}"`);
  }
  return JSON.parse(text);
}

async function snapshotDocument(mode: "envelope" | "problem"): Promise<Json> {
  const url = new URL(`./fixtures/openapi-${mode}.json`, import.meta.url);
  return JSON.parse(await readFile(url, "utf8"));
}

describe("applySchemaNames", () => {
  for (const mode of ["envelope", "problem"] as const) {
    it(`"dto" renames the components and every $ref to them, nothing else (${mode})`, async () => {
      const original = await snapshotDocument(mode);
      const document = structuredClone(original);
      assert.equal(applySchemaNames(document, { schemaNames: "dto" }), document);
      const names = Object.keys(document.components.schemas);
      assert.deepEqual(names, [...Object.values(DTO_NAMES), "ItemDto"]); // order kept
      for (const [ours, dto] of Object.entries(DTO_NAMES)) {
        assert.deepEqual(
          document.components.schemas[dto],
          dtoRefs(original.components.schemas[ours]),
        );
      }
      assert.deepEqual(document.paths, dtoRefs(original.paths));
      assert.doesNotMatch(JSON.stringify(document), /#\/components\/schemas\/Safe(?!\w*Dto")/);
      assert.deepEqual(
        document.paths["/catalog/pages"].get.responses[200].content["application/json"].schema
          .allOf[0],
        { $ref: "#/components/schemas/SafeSuccessResponseDto" },
      );
      await SwaggerParser.validate(structuredClone(document));
    });
  }

  it('is idempotent, and "default" (or no option) leaves the document as it is', async () => {
    const original = await snapshotDocument("envelope");
    const document = structuredClone(original);
    assert.deepEqual(applySchemaNames(document), original);
    assert.deepEqual(applySchemaNames(document, { schemaNames: "default" }), original);
    const once = structuredClone(applySchemaNames(document, { schemaNames: "dto" }));
    assert.deepEqual(applySchemaNames(document, { schemaNames: "dto" }), once);
  });

  it("refuses to replace a component of the application, naming it", () => {
    const document: Json = {
      paths: {},
      components: {
        schemas: { SafePaginationMeta: {}, PaginationMetaDto: { description: "mine" } },
      },
    };
    assert.throws(
      () => applySchemaNames(document, { schemaNames: "dto" }),
      /applySchemaNames: .*`PaginationMetaDto`/,
    );
    assert.deepEqual(document.components.schemas.PaginationMetaDto, { description: "mine" });
  });

  it("validates the option", () => {
    assert.throws(
      () => applySchemaNames({}, { schemaNames: "Dto" as never }),
      /applySchemaNames: `schemaNames` must be "default" or "dto"/,
    );
  });
});

@Controller("v")
class ValidatingController {
  @Get("own")
  @ApiSafeErrorResponse(400, { code: "BAD_DATE", details: { from: "after to" } })
  own() {}

  @Get("plain")
  @SafeResponse()
  plain() {}
}

@Module({ controllers: [ValidatingController] })
class ValidatingModule {}

async function validatingDocument(): Promise<Json> {
  const app = await NestFactory.create(ValidatingModule, { logger: false });
  try {
    await app.init();
    return SwaggerModule.createDocument(app, new DocumentBuilder().build());
  } finally {
    await app.close();
  }
}

describe('applyGlobalErrors with validationDetails: "fields"', () => {
  const FIELDS_SCHEMA = {
    type: "array",
    maxItems: 50,
    items: {
      type: "object",
      required: ["pointer", "messages"],
      properties: {
        pointer: { type: "string", format: "json-pointer" },
        messages: { type: "array", items: { type: "string" } },
      },
    },
  };

  it("documents details as [{ pointer, messages }] on the global 400, never the route's own", async () => {
    const document = applyGlobalErrors(await validatingDocument(), {
      validationDetails: "fields",
      swagger: { globalErrors: [400, 401] },
    });
    const { paths } = document;
    const { schema } = paths["/v/plain"].get.responses[400].content["application/json"];
    assert.equal(schema.allOf[0].$ref, "#/components/schemas/SafeErrorResponse");
    assert.deepEqual(schema.allOf[1].properties.error.properties.details, FIELDS_SCHEMA);
    assert.deepEqual(paths["/v/plain"].get.responses[401].content["application/json"].schema, {
      $ref: "#/components/schemas/SafeErrorResponse",
    });
    // The route's own 400 (not a validation error: its details are an object) stays as written,
    // and its example still validates against its schema.
    const own = paths["/v/own"].get.responses[400].content["application/json"];
    assert.deepEqual(own.schema, { $ref: "#/components/schemas/SafeErrorResponse" });
    assert.deepEqual(bodyValidator(document)(own.schema, own.examples.BAD_DATE.value), []);
    const once = structuredClone(document);
    assert.deepEqual(
      applyGlobalErrors(document, {
        validationDetails: "fields",
        swagger: { globalErrors: [400] },
      }),
      once,
    );
    await SwaggerParser.validate(structuredClone(document));
  });

  it("documents problem details' details the same way", async () => {
    const document = applyGlobalErrors(await validatingDocument(), {
      validationDetails: "fields",
      problemDetails: true,
      swagger: { globalErrors: [400] },
    });
    const { schema } = document.paths["/v/plain"].get.responses[400]
      .content["application/problem+json"];
    assert.equal(schema.allOf[0].$ref, "#/components/schemas/SafeProblemDetails");
    assert.deepEqual(schema.allOf[1].properties.details, FIELDS_SCHEMA);
  });

  it('leaves the default ("messages") document as it was', async () => {
    const options = { swagger: { globalErrors: [400] } };
    const document = applyGlobalErrors(await validatingDocument(), options);
    assert.deepEqual(
      applyGlobalErrors(await validatingDocument(), { ...options, validationDetails: "messages" }),
      document,
    );
    assert.deepEqual(
      document.paths["/v/own"].get.responses[400].content["application/json"].schema,
      {
        $ref: "#/components/schemas/SafeErrorResponse",
      },
    );
  });
});

describe('applyRouteShapes (shapes: "0.14")', () => {
  const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
  const errorShape = (name: string, status: number, code: string, message: string) => ({
    allOf: [ref(name), {
      properties: {
        success: { type: "boolean", example: false },
        statusCode: { type: "integer", minimum: 100, maximum: 599, example: status },
        error: {
          type: "object",
          properties: {
            code: { type: "string", example: code },
            message: { type: "string", example: message },
          },
        },
      },
    }],
  });

  it("@SafeResponse() becomes an allOf of the success $ref, an error envelope an allOf of the error $ref", async () => {
    const document = applyGlobalErrors(await nestDocument(), { swagger: { globalErrors: [401] } });
    const before = structuredClone(document);
    assert.equal(applyRouteShapes(document, { shapes: "0.14" }), document);
    const { paths } = document;
    const json = (path: string, status: number) =>
      paths[path].get.responses[status].content["application/json"];
    assert.deepEqual(json("/a/plain", 200).schema, { allOf: [ref("SafeSuccessResponse")] });
    assert.ok(document.components.schemas.SafeSuccessResponse);
    assert.deepEqual(
      json("/a/own", 404).schema,
      errorShape("SafeErrorResponse", 404, "ITEM_NOT_FOUND", "No such item"),
    );
    assert.deepEqual(
      json("/a/plain", 401).schema,
      errorShape("SafeErrorResponse", 401, "UNAUTHORIZED", "Unauthorized"),
    );
    // The examples and descriptions stay; only schemas changed.
    assert.deepEqual(
      json("/a/own", 404).examples,
      before.paths["/a/own"].get.responses[404].content["application/json"].examples,
    );
    assert.equal(paths["/a/own"].get.responses[404].description, "Not Found");
    await SwaggerParser.validate(structuredClone(document));
  });

  it("after applySchemaNames, points at the DTO names; idempotent; problem details keep their $ref", async () => {
    for (const mode of ["envelope", "problem"] as const) {
      const document = applySchemaNames(await snapshotDocument(mode), { schemaNames: "dto" });
      applyRouteShapes(document, { shapes: "0.14" });
      const text = JSON.stringify(document);
      assert.doesNotMatch(text, /#\/components\/schemas\/Safe(?!\w*Dto")/);
      if (mode === "envelope") {
        assert.match(
          text,
          /"allOf":\[\{"\$ref":"#\/components\/schemas\/SafeErrorResponseDto"\},\{"properties"/,
        );
      } else {assert.doesNotMatch(
          text,
          /"allOf":\[\{"\$ref":"#\/components\/schemas\/ProblemDetailsDto"\},\{"properties"/,
        );}
      const once = structuredClone(document);
      assert.deepEqual(applyRouteShapes(document, { shapes: "0.14" }), once);
      await SwaggerParser.validate(structuredClone(document));
    }
  });

  it('"default" (or no option) leaves the document as it is, and the option is validated', async () => {
    const original = await snapshotDocument("envelope");
    assert.deepEqual(applyRouteShapes(structuredClone(original)), original);
    assert.deepEqual(applyRouteShapes(structuredClone(original), { shapes: "default" }), original);
    assert.throws(
      () => applyRouteShapes({}, { shapes: "0.15" as never }),
      /applyRouteShapes: `shapes` must be "default" or "0.14"/,
    );
  });
});

@Controller("pages")
class PagesController {
  @Get("offset")
  @Paginated({ maxLimit: 10 })
  offset() {}

  @Get("cursor")
  @CursorPaginated({ defaultLimit: 5 })
  cursor() {}

  @Get("unlimited")
  @Paginated()
  unlimited() {}

  @Get("own")
  @Paginated()
  @ApiSafeErrorResponse(400, { code: "BAD_FILTER" })
  own() {}

  @Get("skipped")
  @Paginated()
  @SkipGlobalErrors()
  skipped() {}

  @Get("handler-parsed")
  @Paginated()
  handlerParsed(@PaginationQuery() query: OffsetPaginationQuery) {
    return query;
  }
}

/** A controller-wide `CursorPaginated` without limits over a handler reading its query. */
@Controller("feed-pages")
@CursorPaginated()
class FeedPagesController {
  @Get()
  list(@PaginationQuery() query: CursorPaginationQuery) {
    return query;
  }
}

@Module({ controllers: [PagesController, FeedPagesController] })
class PagesModule {}

describe("applyGlobalErrors on paginated routes", () => {
  async function pagesDocument(): Promise<Json> {
    const app = await NestFactory.create(PagesModule, { logger: false });
    try {
      await app.init();
      return SwaggerModule.createDocument(app, new DocumentBuilder().build());
    } finally {
      await app.close();
    }
  }
  const examplesOf = (document: Json, path: string, media = "application/json") =>
    Object.keys(document.paths[path].get.responses[400]?.content[media].examples ?? {});

  it("documents the 400 INVALID_PAGINATION_QUERY of routes whose query is parsed", async () => {
    const document = applyGlobalErrors(await pagesDocument(), {});
    assert.deepEqual(examplesOf(document, "/pages/offset"), ["INVALID_PAGINATION_QUERY"]);
    assert.deepEqual(examplesOf(document, "/pages/cursor"), ["INVALID_PAGINATION_QUERY"]);
    assert.deepEqual(examplesOf(document, "/pages/own"), ["BAD_FILTER"], "the route's own kept");
    assert.equal(document.paths["/pages/skipped"].get.responses[400], undefined);
    // Without limits (route or module defaultLimit), the pipeline never parses the query...
    assert.equal(document.paths["/pages/unlimited"].get.responses[400], undefined);
    // ...but a handler's PaginationQuery() does (a method's or its controller's pagination).
    assert.deepEqual(examplesOf(document, "/pages/handler-parsed"), ["INVALID_PAGINATION_QUERY"]);
    assert.deepEqual(examplesOf(document, "/feed-pages"), ["INVALID_PAGINATION_QUERY"]);
    const moduleLimit = applyGlobalErrors(await pagesDocument(), { defaultLimit: 20 });
    assert.deepEqual(examplesOf(moduleLimit, "/pages/unlimited"), ["INVALID_PAGINATION_QUERY"]);
    const { content } = document.paths["/pages/offset"].get.responses[400];
    const media = content["application/json"];
    assert.deepEqual(
      bodyValidator(document)(media.schema, media.examples.INVALID_PAGINATION_QUERY.value),
      [],
    );
    assert.equal(
      media.examples.INVALID_PAGINATION_QUERY.value.error.code,
      "INVALID_PAGINATION_QUERY",
    );
    const once = structuredClone(document);
    assert.deepEqual(applyGlobalErrors(document, {}), once);
    await SwaggerParser.validate(structuredClone(document));
  });

  it("next to a global 400, and as problem details", async () => {
    const both = applyGlobalErrors(await pagesDocument(), { swagger: { globalErrors: [400] } });
    assert.deepEqual(examplesOf(both, "/pages/offset"), [
      "BAD_REQUEST",
      "INVALID_PAGINATION_QUERY",
    ]);
    const problem = applyGlobalErrors(await pagesDocument(), { problemDetails: true });
    assert.deepEqual(examplesOf(problem, "/pages/cursor", "application/problem+json"), [
      "INVALID_PAGINATION_QUERY",
    ]);
  });

  it('with validationDetails: "fields", narrows the 400 only when the global errors hold a 400', async () => {
    const plain = { $ref: "#/components/schemas/SafeErrorResponse" };
    for (const globalErrors of [[], [401, 500]]) {
      const document = applyGlobalErrors(await pagesDocument(), {
        validationDetails: "fields",
        swagger: { globalErrors },
      });
      const media = document.paths["/pages/offset"].get.responses[400].content["application/json"];
      assert.deepEqual(Object.keys(media.examples), ["INVALID_PAGINATION_QUERY"]);
      assert.deepEqual(media.schema, plain, `globalErrors ${JSON.stringify(globalErrors)}`);
      assert.deepEqual(
        bodyValidator(document)(media.schema, media.examples.INVALID_PAGINATION_QUERY.value),
        [],
      );
    }
    // With a global 400 (a validation error), the 400 is narrowed, its two examples kept.
    const both = applyGlobalErrors(await pagesDocument(), {
      validationDetails: "fields",
      swagger: { globalErrors: [400] },
    });
    const media = both.paths["/pages/offset"].get.responses[400].content["application/json"];
    assert.equal(media.schema.allOf[0].$ref, plain.$ref);
    assert.deepEqual(Object.keys(media.examples), ["BAD_REQUEST", "INVALID_PAGINATION_QUERY"]);
  });
});

/**
 * Boots `module` on Express, builds its document (through `prepare`, such as
 * `applyApiKeysAdminRoutes`), completes it with `applyGlobalErrors(…, options)` and runs `check` on
 * them; the app is closed after.
 */
async function withDocument(
  module: Type<unknown>,
  options: SafeResponseModuleOptions,
  check: (running: RunningApp, document: Json) => Promise<void>,
  prepare: (built: Json) => Json = (built) => built,
): Promise<void> {
  const running = await boot(module, "express");
  try {
    const built = SwaggerModule.createDocument(running.app, new DocumentBuilder().build());
    const document: Json = applyGlobalErrors(prepare(built), options);
    await SwaggerParser.validate(structuredClone(document));
    await check(running, document);
  } finally {
    await running.close();
  }
}

class AddressDto {
  @ApiProperty()
  city!: string;
  @ApiProperty()
  street!: string;
}

class MemberDto {
  @ApiProperty()
  id!: string;
  @ApiProperty()
  name!: string;
  @ApiProperty({ type: AddressDto })
  address!: AddressDto;
}

const ADA: MemberDto = { id: "1", name: "Ada", address: { city: "London", street: "Baker St" } };

@Controller("members")
class MembersController {
  @Get("decorated")
  @FieldSelection()
  @ApiSafeResponse(MemberDto)
  decorated() {
    return ADA;
  }

  @Get("composite")
  @SafeEndpoint(MemberDto, { fieldSelection: true })
  composite() {
    return ADA;
  }

  @Get("pages")
  @SafePaginatedEndpoint(MemberDto, { maxLimit: 10, fieldSelection: true })
  pages(@PaginationQuery() { page, limit = 10 }: OffsetPaginationQuery) {
    return { data: [ADA], total: 1, page, limit };
  }

  @Get("module")
  @ApiSafeResponse(MemberDto)
  viaModule() {
    return ADA;
  }

  @Get("off")
  @FieldSelection(false)
  @ApiSafeResponse(MemberDto)
  off() {
    return ADA;
  }
}

const SELECTING: SafeResponseModuleOptions = { fieldSelection: true };

@Module({ imports: [SafeResponseModule.register(SELECTING)], controllers: [MembersController] })
class MembersModule {}

describe("applyGlobalErrors on routes with field selection", () => {
  it("documents data without required properties, and the module's `fields` parameter", async () => {
    await withDocument(MembersModule, SELECTING, async (running, document) => {
      const validate = bodyValidator(document);
      for (const path of ["decorated", "composite", "pages", "module"]) {
        const operation = document.paths[`/members/${path}`].get;
        assert.ok(
          operation.parameters.some((p: Json) => p.in === "query" && p.name === "fields"),
          `${path}: the fields parameter`,
        );
        for (const fields of ["name", "address.city"]) {
          const response = await fetch(`${running.url}/members/${path}?fields=${fields}`);
          const body = await response.json();
          const { schema } = operation.responses[200].content["application/json"];
          assert.deepEqual(validate(schema, body), [], `${path}?fields=${fields}`);
        }
      }
      // The full model stays as it was; a route opted out keeps it.
      assert.deepEqual(document.components.schemas.MemberDto.required, ["id", "name", "address"]);
      const off = document.paths["/members/off"].get;
      assert.equal(off.parameters?.some((p: Json) => p.name === "fields") ?? false, false);
      assert.equal(
        off.responses[200].content["application/json"].schema.allOf[1].properties.data.$ref,
        "#/components/schemas/MemberDto",
      );
      const once = structuredClone(document);
      assert.deepEqual(applyGlobalErrors(document, SELECTING), once, "idempotent");
      const oas31: Json = SwaggerModule.createDocument(
        running.app,
        new DocumentBuilder().setOpenAPIVersion("3.1.0").build(),
      );
      await SwaggerParser.validate(structuredClone(applyGlobalErrors(oas31, SELECTING)));
    });
  });
});

@Controller("orders")
class OrdersController {
  @Post()
  @HttpCode(201)
  @SafeResponse()
  create() {
    return { id: "o1" };
  }

  @Delete()
  @HttpCode(204)
  @SafeResponse()
  remove() {}

  @Put()
  @SafeResponse({ description: "Replaced" })
  @HttpCode(202)
  replace() {
    return { id: "o1" };
  }
}

@Module({ imports: [SafeResponseModule.register({})], controllers: [OrdersController] })
class OrdersModule {}

describe("applyGlobalErrors on SafeResponse routes", () => {
  it("documents the status the server sends, @HttpCode above or below @SafeResponse()", async () => {
    await withDocument(OrdersModule, {}, async (running, document) => {
      const expected = { post: 201, delete: 204, put: 202 } as const;
      for (const [method, status] of Object.entries(expected)) {
        const response = await fetch(`${running.url}/orders`, { method: method.toUpperCase() });
        const text = await response.text();
        assert.equal(response.status, status);
        const { responses } = document.paths["/orders"][method];
        assert.deepEqual(Object.keys(responses), [String(status)], method);
        assert.equal(responses[status].content === undefined, text === "", `${method}: a body`);
      }
      assert.equal(document.paths["/orders"].post.responses[201].description, "Created");
      assert.equal(document.paths["/orders"].put.responses[202].description, "Replaced");
      const once = structuredClone(document);
      assert.deepEqual(applyGlobalErrors(document, {}), once, "idempotent");
    });
  });
});

/** What `document` declares against a real GET `response` (status, content type, body): the errors. */
async function disagreements(
  document: Json,
  template: string,
  response: Response,
): Promise<string[]> {
  const body = await response.json();
  const declared = document.paths[template].get.responses[response.status];
  if (declared === undefined) return [`${response.status} not documented`];
  const type = response.headers.get("content-type")?.split(";")[0] ?? "";
  const media = declared.content?.[type];
  if (media === undefined) return [`${type} not documented at ${response.status}`];
  return bodyValidator(document)(media.schema, body);
}

const CATALOG = defineErrors({ USER_NOT_FOUND: { status: 404, message: "User not found" } });

@Controller("problems")
class ProblemsController {
  @Get("own")
  @ApiSafeErrorResponse(404, { code: "USER_NOT_FOUND", message: "User not found" })
  own() {
    throw new NotFoundException({ code: "USER_NOT_FOUND", message: "User not found" });
  }

  @Get("catalog")
  @ApiSafeCatalogErrors(CATALOG, ["USER_NOT_FOUND"])
  catalog() {
    throw new SafeException("USER_NOT_FOUND");
  }
}

const AdminKeysController = guardedAdminController("admin");

const PROBLEMS: SafeResponseModuleOptions = {
  problemDetails: { baseUrl: "https://errors.example.com" },
  errorCatalog: CATALOG,
  swagger: { globalErrors: [401, 403, 500] },
};

@Module({
  imports: [
    SafeResponseModule.register(PROBLEMS),
    ApiKeysModule.forRoot({
      peppers: { 1: "a-pepper-of-at-least-thirty-two-bytes" },
      storage: new InMemoryApiKeyStorage(),
    }),
  ],
  controllers: [ProblemsController, AdminKeysController],
})
class ProblemsModule {}

describe("applyGlobalErrors in problem-details mode", () => {
  const admin = (built: Json) => applyApiKeysAdminRoutes(built, { prefix: "/admin" });

  it("documents the problem details a guard sends on the admin routes' 401 and 403", async () => {
    await withDocument(ProblemsModule, PROBLEMS, async (running, document) => {
      const reader = await running.app.get(ApiKeysService).create({
        tenantId: "t",
        name: "reader",
        scopes: [{ resource: "projects", level: "read" }],
      });
      for (const headers of [{}, { "x-api-key": reader.key }] as Record<string, string>[]) {
        const response = await fetch(`${running.url}/admin/keys`, { headers });
        assert.ok([401, 403].includes(response.status));
        assert.deepEqual(await disagreements(document, "/admin/keys", response), []);
        const { content } = document.paths["/admin/keys"].get.responses[response.status];
        assert.ok(content["application/json"], "the envelope kept beside");
      }
    }, admin);
  });

  it("documents the problem details of route-level error decorators", async () => {
    await withDocument(ProblemsModule, PROBLEMS, async (running, document) => {
      for (const path of ["/problems/own", "/problems/catalog"]) {
        const response = await fetch(running.url + path);
        assert.equal(response.status, 404);
        assert.deepEqual(await disagreements(document, path, response), [], path);
        const media = document.paths[path].get.responses[404].content["application/problem+json"];
        assert.equal(media.examples.USER_NOT_FOUND.value.code, "USER_NOT_FOUND");
      }
      const once = structuredClone(document);
      assert.deepEqual(applyGlobalErrors(document, PROBLEMS), once, "idempotent");
    }, admin);
  });
});

const SUNSET = { since: "2025-01-01", sunset: "2030-01-01", link: "https://example.com/v2" };

@Controller("legacy")
class LegacyController {
  @Get("status")
  @SkipGlobalErrors()
  @Deprecated(SUNSET)
  @SafeResponse()
  status() {
    return "up";
  }

  @Get("plan")
  @Deprecated(SUNSET)
  @SafeResponse()
  plan() {
    throw new ForbiddenException("Your plan does not include this"); // the handler's, not a guard's
  }
}

const LEGACY: SafeResponseModuleOptions = { requestId: true, swagger: { globalErrors: [403] } };

@Module({ imports: [SafeResponseModule.register(LEGACY)], controllers: [LegacyController] })
class LegacyModule {}

describe("applyGlobalErrors: response headers", () => {
  it("declares every header sent, on skipped routes and on a handler's 403 too", async () => {
    await withDocument(LegacyModule, LEGACY, async (running, document) => {
      for (const [path, status] of [["/legacy/status", 200], ["/legacy/plan", 403]] as const) {
        const response = await fetch(running.url + path);
        await response.text();
        assert.equal(response.status, status);
        const sent = ["x-request-id", "deprecation", "sunset", "link"]
          .filter((name) => response.headers.has(name));
        assert.equal(sent.length, 4, path);
        const declared = Object.keys(document.paths[path].get.responses[status].headers ?? {})
          .map((name) => name.toLowerCase());
        assert.deepEqual(sent.filter((name) => !declared.includes(name)), [], path);
      }
      assert.equal(document.paths["/legacy/status"].get.responses[403], undefined, "skipped");
    });
  });
});

/** A controller whose routes subclasses inherit. */
@Controller("base")
class BaseController {
  @Get("fail")
  fail() {
    throw new NotFoundException();
  }

  @Get("items")
  items() {
    return { data: [1], total: 1, page: 1, limit: 10 };
  }
}

@Controller("sub")
@Deprecated({ since: "2026-01-01T00:00:00Z" })
@ProblemType("https://errors.example.com/sub")
@SkipGlobalErrors()
@Paginated()
class SubController extends BaseController {}

const INHERITED: SafeResponseModuleOptions = {
  problemDetails: true,
  swagger: { globalErrors: [500] },
};

@Module({
  imports: [SafeResponseModule.register(INHERITED)],
  controllers: [BaseController, SubController],
})
class InheritedModule {}

describe("applyGlobalErrors: a subclass controller's decorators on its inherited routes", () => {
  it("documents them as the server applies them, on the subclass's routes only", async () => {
    await withDocument(InheritedModule, INHERITED, async (running, document) => {
      for (const base of ["base", "sub"]) {
        const sub = base === "sub";
        const failed = await fetch(`${running.url}/${base}/fail`);
        const problem = await failed.json();
        assert.equal(failed.headers.has("deprecation"), sub, base);
        assert.equal(problem.type === "https://errors.example.com/sub", sub, base);
        const listed = await fetch(`${running.url}/${base}/items`);
        const body = await listed.json();
        assert.equal(body.meta?.pagination !== undefined, sub, base);

        const fail = document.paths[`/${base}/fail`].get;
        const items = document.paths[`/${base}/items`].get;
        for (const operation of [fail, items]) {
          assert.equal(operation.deprecated === true, sub, base);
          assert.equal(
            operation["x-safe-problem-type"] === "https://errors.example.com/sub",
            sub,
            base,
          );
          assert.equal(operation["x-safe-skip-global-errors"] === true, sub, base);
          assert.equal(operation.responses[500] === undefined, sub, `${base}: global errors`);
          const headers = Object.keys(operation.responses[200]?.headers ?? {});
          assert.equal(headers.includes("Deprecation"), sub, base);
        }
        assert.equal(items["x-safe-paginated"] !== undefined, sub, base);
        const page = (items.parameters ?? []).some((p: Json) => p.name === "page");
        assert.equal(page, sub, `${base}: the page parameter`);
      }
    });
  });
});
