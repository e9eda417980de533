/**
 * A `SafeResponse` route or a composite endpoint (`SafeEndpoint`) that sends its success itself
 * (`@Sse`, or a non-JSON `Content-Type` of its own by `@Header`) is documented with that media
 * type, not the JSON envelope; a JSON `Content-Type` of its own keeps the envelope. One Nest
 * answers itself is documented as Nest sends it: `@Redirect` at its status with `Location` and no
 * body, `@Render` as HTML; one whose handler sends its own body (`@Res()`) without content. Checked
 * against real responses, on Express and Fastify.
 */
import "reflect-metadata";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  Controller,
  Get,
  Header,
  type INestApplication,
  type MessageEvent,
  Module,
  Redirect,
  Render,
  Res,
  Sse,
} from "@nestjs/common";
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

/** Handlers that send their own body (`@Res()`, no passthrough): raw, whatever the decorators. */
@Controller("o")
class OwnResponseController {
  @Get("endpoint")
  @SafeEndpoint(PageDto)
  endpoint(@Res() res: { send(body: unknown): void }) {
    res.send({ html: "own" });
  }

  @Get("safe")
  @SafeResponse()
  safe(@Res() res: { send(body: unknown): void }) {
    res.send({ html: "own" });
  }
}

describe("SafeResponse, SafeEndpoint: a handler sending its own body (@Res()) is documented without the envelope", () => {
  for (const adapter of ADAPTERS) {
    it(adapter, async () => {
      const options: SafeResponseModuleOptions = { swagger: { globalErrors: [500] } };
      @Module({
        imports: [SafeResponseModule.register(options)],
        controllers: [OwnResponseController],
      })
      class OwnModule {}
      const running = await boot(OwnModule, adapter);
      try {
        const document: Json = applyGlobalErrors(
          SwaggerModule.createDocument(running.app, new DocumentBuilder().build()),
          options,
        );
        for (const path of ["/o/endpoint", "/o/safe"]) {
          const response = await fetch(running.url + path);
          assert.deepEqual(await response.json(), { html: "own" }, path);
          const documented = documentedResponse(document, path, "get", 200);
          assert.equal(documented.content, undefined, path);
        }
        await SwaggerParser.validate(structuredClone(document));
      } finally {
        await running.close();
      }
    });
  }
});

@Controller("r")
class NestAnswersController {
  @Get("moved")
  @Redirect("/target", 301)
  @SafeResponse()
  moved() {}

  @Get("found")
  @SafeEndpoint(PageDto)
  @Redirect("/target")
  found() {}

  @Get("page")
  @Render("page")
  @SafeResponse()
  page() {
    return { name: "Ada" };
  }
}

/** A view engine for `@Render` sending HTML, as Express's `res.render` and `@fastify/view` do. */
function installViews(app: INestApplication, adapter: string, dir: string): void {
  const instance = app.getHttpAdapter().getInstance();
  if (adapter === "express") {
    instance.engine(
      "html",
      (_path: string, _locals: unknown, done: (e: null, s: string) => void) =>
        done(null, "<p>hello</p>"),
    );
    instance.set("views", dir);
    instance.set("view engine", "html");
  } else {
    instance.decorateReply(
      "view",
      function (this: { type(t: string): { send(s: string): unknown } }) {
        return this.type("text/html; charset=utf-8").send("<p>hello</p>");
      },
    );
  }
}

describe("SafeResponse, SafeEndpoint on a route Nest answers: documented as Nest sends it", () => {
  for (const adapter of ADAPTERS) {
    it(adapter, async () => {
      const options: SafeResponseModuleOptions = { swagger: { globalErrors: [500] } };
      @Module({
        imports: [SafeResponseModule.register(options)],
        controllers: [NestAnswersController],
      })
      class AnswersModule {}
      const dir = await mkdtemp(join(tmpdir(), "api-kit-views-"));
      await writeFile(join(dir, "page.html"), "");
      const running = await boot(AnswersModule, adapter, {
        before: (app) => installViews(app, adapter, dir),
      });
      try {
        const document: Json = applyGlobalErrors(
          SwaggerModule.createDocument(running.app, new DocumentBuilder().build()),
          options,
        );
        for (const [path, status] of [["/r/moved", 301], ["/r/found", 302]] as const) {
          const response = await fetch(running.url + path, { redirect: "manual" });
          await response.body?.cancel();
          assert.equal(response.status, status, path);
          assert.equal(response.headers.get("location"), "/target", path);
          const responses = document.paths[path].get.responses;
          assert.deepEqual(Object.keys(responses).sort(), [String(status), "500"], path);
          assert.equal(responses[status].content, undefined, path);
          assert.ok(responses[status].headers?.Location, `${path} documents Location`);
        }
        const response = await fetch(running.url + "/r/page");
        assert.equal(response.status, 200);
        assert.equal(response.headers.get("content-type")?.split(";", 1)[0], "text/html");
        assert.equal(await response.text(), "<p>hello</p>");
        const content = documentedResponse(document, "/r/page", "get", 200).content;
        assert.deepEqual(content, { "text/html": { schema: { type: "string" } } });
        await SwaggerParser.validate(structuredClone(document));
      } finally {
        await running.close();
        await rm(dir, { recursive: true });
      }
    });
  }
});
