/**
 * `applyGlobalErrors` documents the response headers the server sends: the request id (module
 * option `requestId`) on every response, `Deprecation`, `Sunset` and `Link` on a `Deprecated`
 * route's, and the pagination `Link` on a paginated route's success (`linkHeader`). Checked
 * against real responses, on Express and Fastify.
 */
import "reflect-metadata";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Controller, Get, Module } from "@nestjs/common";
import { DocumentBuilder, SwaggerModule } from "@nestjs/swagger";
import SwaggerParser from "@apidevtools/swagger-parser";
import {
  Deprecated,
  Paginated,
  SafeResponse,
  SafeResponseModule,
  type SafeResponseModuleOptions,
} from "../../../safe_response/nest/mod.ts";
import { applyGlobalErrors } from "../../../safe_response/openapi/mod.ts";
import { ADAPTERS, boot } from "../nest/helpers.ts";
import { documentedResponse, type Json } from "./openapi_validation.ts";

@Controller("h")
class HeadersController {
  @Get("plain")
  @SafeResponse()
  plain() {
    return 1;
  }

  @Get("old")
  @SafeResponse()
  @Deprecated({ since: "2025-01-01", sunset: "2027-01-01", link: "https://example.com/v2" })
  old() {
    return 1;
  }

  @Get("pages")
  @Paginated({ maxLimit: 2, linkHeader: true })
  pages() {
    return { data: [1, 2], total: 5, page: 1, limit: 2 };
  }

  @Get("module-pages")
  @Paginated({ maxLimit: 2 })
  modulePages() {
    return { data: [1, 2], total: 5, page: 1, limit: 2 };
  }
}

const HEADERS = ["x-request-id", "deprecation", "sunset", "link"];

function app(options: SafeResponseModuleOptions) {
  @Module({ imports: [SafeResponseModule.register(options)], controllers: [HeadersController] })
  class HeadersModule {}
  return HeadersModule;
}

describe("applyGlobalErrors: response headers", () => {
  for (const adapter of ADAPTERS) {
    for (const linkHeader of [false, true]) {
      it(`${adapter}, module linkHeader ${linkHeader}: the headers sent are the documented ones`, async () => {
        const options: SafeResponseModuleOptions = {
          requestId: true,
          linkHeader,
          swagger: { globalErrors: [500] },
        };
        const running = await boot(app(options), adapter);
        try {
          const document: Json = applyGlobalErrors(
            SwaggerModule.createDocument(running.app, new DocumentBuilder().build()),
            options,
          );
          for (const path of ["/h/plain", "/h/old", "/h/pages", "/h/module-pages"]) {
            const response = await fetch(running.url + path);
            await response.body?.cancel();
            const documented = documentedResponse(document, path, "get", response.status);
            const names = Object.keys(documented.headers ?? {}).map((name) => name.toLowerCase());
            const sent = HEADERS.filter((name) => response.headers.has(name));
            assert.deepEqual(names.sort(), sent.sort(), path);
          }
          const old = document.paths["/h/old"].get.responses;
          assert.deepEqual(Object.keys(old[500].headers).sort(), [
            "Deprecation",
            "Link",
            "Sunset",
            "X-Request-Id",
          ]);
          assert.deepEqual(Object.keys(document.paths["/h/pages"].get.responses[400].headers), [
            "X-Request-Id",
          ]);
          await SwaggerParser.validate(structuredClone(document));
          const once = structuredClone(document);
          assert.deepEqual(applyGlobalErrors(document, options), once);
        } finally {
          await running.close();
        }
      });
    }
  }
});
