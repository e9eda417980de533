/**
 * A `SafeResponse` route or a composite endpoint (`SafeEndpoint`) that sends its success itself
 * (`@Sse`, or a non-JSON `Content-Type` of its own by `@Header`) is documented with that media
 * type, not the JSON envelope; a JSON `Content-Type` of its own keeps the envelope. Checked against
 * real responses, on Express and Fastify.
 */
import "reflect-metadata";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Controller, Get, Header, type MessageEvent, Module, Sse } from "@nestjs/common";
import { ApiProperty, DocumentBuilder, SwaggerModule } from "@nestjs/swagger";
import SwaggerParser from "@apidevtools/swagger-parser";
import { type Observable, of } from "rxjs";
import {
  SafeResponse,
  SafeResponseModule,
  type SafeResponseModuleOptions,
} from "../../../safe_response/nest/mod.ts";
import { applyGlobalErrors, SafeEndpoint } from "../../../safe_response/openapi/mod.ts";
import { ADAPTERS, boot } from "../nest/helpers.ts";
import { documentedResponse, type Json } from "./openapi_validation.ts";

class PageDto {
  @ApiProperty()
  html!: string;
}

@Controller("m")
class MediaController {
  @Get("page")
  @Header("Content-Type", "text/html; charset=utf-8")
  @SafeResponse()
  page() {
    return "<h1>hi</h1>";
  }

  @Get("page-endpoint")
  @SafeEndpoint(PageDto)
  @Header("content-type", "text/html")
  pageEndpoint() {
    return "<h1>hi</h1>";
  }

  @Sse("events")
  @SafeResponse()
  events(): Observable<MessageEvent> {
    return of({ data: { a: 1 }, id: "7", type: "tick" });
  }

  @Get("api-json")
  @SafeResponse()
  @Header("Content-Type", "application/vnd.api+json")
  apiJson() {
    return { a: 1 };
  }
}

/** Each route: the media type sent, and whether the body is the envelope. */
const ROUTES: ReadonlyArray<[string, string, boolean]> = [
  ["/m/page", "text/html; charset=utf-8", false],
  ["/m/page-endpoint", "text/html", false],
  ["/m/events", "text/event-stream", false],
  ["/m/api-json", "application/vnd.api+json", true],
];

describe("SafeResponse, SafeEndpoint: the success media type documented is the one sent", () => {
  for (const adapter of ADAPTERS) {
    it(adapter, async () => {
      const options: SafeResponseModuleOptions = { swagger: { globalErrors: [500] } };
      @Module({ imports: [SafeResponseModule.register(options)], controllers: [MediaController] })
      class MediaModule {}
      const running = await boot(MediaModule, adapter);
      try {
        const document: Json = applyGlobalErrors(
          SwaggerModule.createDocument(running.app, new DocumentBuilder().build()),
          options,
        );
        for (const [path, media, envelope] of ROUTES) {
          const response = await fetch(running.url + path);
          const body = await response.text();
          assert.equal(response.status, 200, path);
          assert.equal(
            response.headers.get("content-type")?.split(";", 1)[0],
            media.split(";", 1)[0],
          );
          const sent = envelope ? "application/json" : media;
          const content = documentedResponse(document, path, "get", 200).content;
          assert.deepEqual(Object.keys(content), [sent], path);
          if (envelope) {
            assert.equal(JSON.parse(body).success, true, path);
          } else {
            assert.deepEqual(content[sent], { schema: { type: "string" } }, path);
            assert.ok(!body.includes('"success"'), path);
          }
        }
        await SwaggerParser.validate(structuredClone(document));
      } finally {
        await running.close();
      }
    });
  }
});
