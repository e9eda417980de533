/**
 * Successes the interceptor must not wrap, on Express and Fastify over real
 * HTTP: routes Nest answers itself (`@Redirect` reads `{ url, statusCode }`
 * from the handler's result, `@Render` renders it), and statuses whose
 * response has no body (1xx, 204, 205, 304: raw bytes, no envelope and no
 * JSON `Content-Type`, the request id, rate-limit and deprecation headers
 * kept), as without the module and as the Fetch binding sends them; `@Sse`
 * streams (each event as Nest writes it), and a route that set its own
 * non-JSON `Content-Type` (`@Header`, docs/settings-page.md's page) sent as
 * it returned it.
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
  HttpCode,
  type INestApplication,
  type MiddlewareConsumer,
  Module,
  type NestModule,
  Redirect,
  Render,
  Res,
  Sse,
} from "@nestjs/common";
import { interval, map, take } from "rxjs";
import { readRouteOptions } from "../../../safe_response/_route_metadata.ts";
import {
  Deprecated,
  RawResponse,
  SafeResponse,
} from "../../../safe_response/nest/safe_response.decorators.ts";
import { SafeResponseModule } from "../../../safe_response/nest/safe_response.module.ts";
import {
  getRequest,
  rawRequest,
  type RawResponse as RawReply,
} from "../../reliability/nest_app.ts";
import { type AdapterName, ADAPTERS, boot, getJson } from "./helpers.ts";

const DEPRECATION = "@1767225600"; // 2026-01-01T00:00:00Z

@Controller("go")
class RedirectController {
  @Get("fixed")
  @Redirect("/target", 301)
  @Deprecated({ since: "2026-01-01T00:00:00Z" })
  fixed() {}

  @Get("dynamic")
  @Redirect("/target", 302)
  dynamic() {
    return { url: "/elsewhere", statusCode: 307 }; // Nest's documented dynamic redirect
  }

  @Get("wrapped")
  @Redirect("/target", 303)
  @SafeResponse() // cannot wrap what Nest answers itself
  wrapped() {
    return { url: "/chosen" };
  }

  @Get("page")
  @Render("page")
  page() {
    return { name: "Ada" };
  }
}

@Controller("n")
class NullBodyController {
  @Get("204")
  @HttpCode(204)
  @Deprecated({ since: "2026-01-01T00:00:00Z" })
  s204() {
    return { a: 1 };
  }

  @Get("205")
  @HttpCode(205)
  @Deprecated({ since: "2026-01-01T00:00:00Z" })
  s205() {
    return { a: 1 };
  }

  @Get("205-nothing")
  @HttpCode(205)
  nothing() {
    return undefined;
  }

  @Get("205-passthrough")
  passthrough(@Res({ passthrough: true }) response: { status(code: number): unknown }) {
    response.status(205);
    return { a: 1 };
  }

  @Get("304")
  @HttpCode(304)
  @Deprecated({ since: "2026-01-01T00:00:00Z" })
  s304() {
    return { a: 1 };
  }

  @Get("204-then-200")
  @HttpCode(204)
  found(@Res({ passthrough: true }) response: { status(code: number): unknown }) {
    response.status(200); // content after all: the status sent decides, not the planned one
    return { a: 1 };
  }

  @Get("304-passthrough")
  notModified(@Res({ passthrough: true }) response: { status(code: number): unknown }) {
    response.status(304);
    return { a: 1 };
  }

  @Get("103")
  @HttpCode(103)
  s103() {
    return { a: 1 };
  }

  @Get("200")
  @Deprecated({ since: "2026-01-01T00:00:00Z" })
  ok() {
    return { a: 1 };
  }

  @Get("raw-200")
  @RawResponse()
  raw() {
    return { raw: 1 };
  }
}

@Controller("s")
class OwnTypeController {
  @Sse("events")
  events() {
    return interval(1).pipe(
      take(2),
      map((i) => ({ data: { i }, type: "tick", id: `m${i}`, retry: 1000 })),
    );
  }

  // docs/settings-page.md's page, as printed there
  @Get("settings")
  @Header("content-type", "text/html; charset=utf-8")
  page(): string {
    return "<!doctype html><title>API keys</title>";
  }

  @Get("export.csv")
  @Header("Content-Type", "text/csv")
  @Deprecated({ since: "2026-01-01T00:00:00Z" })
  csv(): string {
    return "id,name\n1,a\n";
  }

  @Get("vendor-json")
  @Header("Content-Type", "application/vnd.api+json")
  vendor() {
    return { a: 1 };
  }

  @Get("buffer")
  @Deprecated({ since: "2026-01-01T00:00:00Z" })
  buffer() {
    return Buffer.from("raw\x00bytes");
  }

  @Get("uint8array")
  uint8array() {
    return new TextEncoder().encode("raw\x00bytes");
  }

  @Get("arraybuffer")
  arraybuffer() {
    return new TextEncoder().encode("raw\x00bytes").buffer;
  }

  @Get("image.png")
  @Header("Content-Type", "image/png")
  png() {
    return Buffer.from([0x89, 0x50, 0x4e, 0x47]);
  }
}

/** Sets rate-limit headers before the route, as `ApiKeysGuard` does. */
function rateLimitMiddleware(
  _request: unknown,
  response: { setHeader(name: string, value: string): void },
  next: () => void,
): void {
  response.setHeader("X-RateLimit-Limit", "5");
  response.setHeader("X-RateLimit-Remaining", "4");
  next();
}

@Module({
  imports: [SafeResponseModule.register({ requestId: true, rateLimit: true })],
  controllers: [RedirectController, NullBodyController, OwnTypeController],
})
class AppModule implements NestModule {
  configure(consumer: MiddlewareConsumer) {
    consumer.apply(rateLimitMiddleware).forRoutes("n/*path", "s/*path");
  }
}

/** A view engine for `@Render`: `page` renders `hello <name>` from what it is given. */
function installViews(app: INestApplication, adapter: AdapterName, dir: string): void {
  const render = (view: string, locals: Record<string, unknown>) =>
    `${view}: hello ${String(locals.name)}; envelope: ${"success" in locals}`;
  const instance = app.getHttpAdapter().getInstance();
  if (adapter === "express") {
    instance.engine(
      "txt",
      (path: string, locals: Record<string, unknown>, done: (e: null, s: string) => void) =>
        done(null, render(path.split(/[\\/]/).pop()!.replace(/\.txt$/, ""), locals)),
    );
    instance.set("views", dir);
    instance.set("view engine", "txt");
  } else {
    // What @fastify/view adds to the reply, which Nest's FastifyAdapter.render calls
    instance.decorateReply(
      "view",
      function (this: { type(t: string): { send(s: string): unknown } }, view: string, locals: {
        name?: unknown;
      }) {
        return this.type("text/plain").send(render(view, locals));
      },
    );
  }
}

async function bootApp(adapter: AdapterName) {
  const dir = await mkdtemp(join(tmpdir(), "api-kit-views-"));
  await writeFile(join(dir, "page.txt"), "");
  const running = await boot(AppModule, adapter, {
    before: (app) => installViews(app, adapter, dir),
  });
  const port = Number(new URL(running.url).port);
  return {
    ...running,
    port,
    get: async (target: string): Promise<RawReply> => {
      const reply = await rawRequest(port, getRequest(target, [["X-Request-Id", "rid-1"]]));
      assert.ok(reply !== null, `${target}: no answer`);
      return reply;
    },
    close: async () => {
      await running.close();
      await rm(dir, { recursive: true });
    },
  };
}

describe("the route plan of a route Nest answers itself", () => {
  it("is raw under @Redirect and @Render, whatever SafeResponse says", () => {
    for (const name of ["fixed", "dynamic", "wrapped", "page"] as const) {
      const options = readRouteOptions(RedirectController, RedirectController.prototype[name]);
      assert.equal(options.raw, true, name);
    }
    const ok = readRouteOptions(NullBodyController, NullBodyController.prototype.ok);
    assert.notEqual(ok.raw, true);
  });

  it("is raw under @Sse", () => {
    const options = readRouteOptions(OwnTypeController, OwnTypeController.prototype.events);
    assert.equal(options.raw, true);
  });
});

for (const adapter of ADAPTERS) {
  describe(`routes Nest answers itself (${adapter})`, () => {
    it("@Redirect answers its status and Location, the route's headers kept", async () => {
      const app = await bootApp(adapter);
      try {
        const reply = await app.get("/go/fixed");
        assert.equal(reply.status, 301, reply.raw);
        assert.equal(reply.headers.location, "/target");
        assert.equal(reply.headers.deprecation, DEPRECATION);
        assert.doesNotMatch(reply.body, /"success"/);
      } finally {
        await app.close();
      }
    });

    it("a returned { url, statusCode } is honoured, also under SafeResponse()", async () => {
      const app = await bootApp(adapter);
      try {
        const dynamic = await fetch(`${app.url}/go/dynamic`, { redirect: "manual" });
        await dynamic.body?.cancel();
        assert.equal(dynamic.status, 307);
        assert.equal(dynamic.headers.get("location"), "/elsewhere");
        const wrapped = await fetch(`${app.url}/go/wrapped`, { redirect: "manual" });
        await wrapped.body?.cancel();
        assert.equal(wrapped.status, 303);
        assert.equal(wrapped.headers.get("location"), "/chosen");
      } finally {
        await app.close();
      }
    });

    it("@Render renders the handler's result, not the envelope", async () => {
      const app = await bootApp(adapter);
      try {
        const response = await fetch(`${app.url}/go/page`);
        assert.equal(response.status, 200);
        assert.equal(await response.text(), "page: hello Ada; envelope: false");
      } finally {
        await app.close();
      }
    });
  });

  describe(`routes that send their own media type (${adapter})`, () => {
    it("@Sse sends each event as Nest writes it: type, id and retry kept, no envelope", async () => {
      const app = await bootApp(adapter);
      try {
        const response = await fetch(`${app.url}/s/events`);
        assert.equal(response.status, 200);
        assert.match(response.headers.get("content-type") ?? "", /^text\/event-stream/);
        const text = await response.text();
        assert.doesNotMatch(text, /"success"|"data":/, text);
        assert.match(text, /event: tick\nid: m0\nretry: 1000\ndata: \{"i":0\}\n/, text);
        assert.match(text, /event: tick\nid: m1\nretry: 1000\ndata: \{"i":1\}\n/, text);
      } finally {
        await app.close();
      }
    });

    it("a non-JSON @Header Content-Type sends the returned text as it is, headers kept", async () => {
      const app = await bootApp(adapter);
      try {
        const page = await app.get("/s/settings");
        assert.equal(page.status, 200, page.raw);
        assert.equal(page.headers["content-type"], "text/html; charset=utf-8", page.raw);
        assert.equal(page.body, "<!doctype html><title>API keys</title>", page.raw);
        assert.equal(page.headers["x-request-id"], "rid-1", page.raw);
        const csv = await app.get("/s/export.csv");
        assert.equal(csv.status, 200, csv.raw);
        assert.match(csv.headers["content-type"], /^text\/csv/, csv.raw);
        assert.equal(csv.body, "id,name\n1,a\n", csv.raw);
        assert.equal(csv.headers.deprecation, DEPRECATION, csv.raw);
        const vendor = await getJson(app.url, "/s/vendor-json");
        assert.equal(vendor.status, 200);
        assert.equal(vendor.body.success, true); // a JSON media type keeps its envelope
        assert.equal(
          (vendor.body.meta as { rateLimit: { remaining: number } }).rateLimit.remaining,
          4,
        );
      } finally {
        await app.close();
      }
    });
  });

  describe(`binary results (${adapter})`, () => {
    it("a Buffer, Uint8Array or ArrayBuffer is sent as its bytes (never JSON), the route's headers kept", async () => {
      const app = await bootApp(adapter);
      try {
        for (const path of ["buffer", "uint8array", "arraybuffer"]) {
          const response = await fetch(`${app.url}/s/${path}`, {
            headers: { "X-Request-Id": "rid-1" },
          });
          const bytes = new Uint8Array(await response.arrayBuffer());
          assert.equal(response.status, 200, path);
          assert.deepEqual(bytes, new TextEncoder().encode("raw\x00bytes"), path);
          assert.equal(response.headers.get("content-type"), "application/octet-stream", path);
          assert.equal(response.headers.get("content-length"), String(bytes.length), path);
          assert.equal(response.headers.get("x-request-id"), "rid-1", path);
          if (path === "buffer") assert.equal(response.headers.get("deprecation"), DEPRECATION);
        }
        const png = await fetch(`${app.url}/s/image.png`);
        assert.equal(png.headers.get("content-type"), "image/png");
        assert.deepEqual(
          new Uint8Array(await png.arrayBuffer()),
          new Uint8Array([0x89, 0x50, 0x4e, 0x47]),
        );
      } finally {
        await app.close();
      }
    });
  });

  describe(`successes without a body (${adapter})`, () => {
    /** No body, no Content-Type, no Content-Length but 0; the request id and rate limits kept. */
    const assertNoBody = (reply: RawReply, status: number) => {
      assert.equal(reply.status, status, reply.raw);
      assert.equal(reply.body, "", reply.raw);
      assert.equal(reply.headers["content-type"], undefined, reply.raw);
      assert.ok([undefined, "0"].includes(reply.headers["content-length"]), reply.raw);
      assert.equal(reply.headers["x-request-id"], "rid-1", reply.raw);
      assert.equal(reply.headers["x-ratelimit-limit"], "5", reply.raw);
      assert.equal(reply.headers["x-ratelimit-remaining"], "4", reply.raw);
    };

    it("204, 205 and 304 from @HttpCode: no body, the deprecation headers kept", async () => {
      const app = await bootApp(adapter);
      try {
        for (const status of [204, 205, 304]) {
          const reply = await app.get(`/n/${status}`);
          assertNoBody(reply, status);
          assert.equal(reply.headers.deprecation, DEPRECATION, reply.raw);
        }
      } finally {
        await app.close();
      }
    });

    it("205 and 304 set on the response, and a 205 returning nothing: no body", async () => {
      const app = await bootApp(adapter);
      try {
        assertNoBody(await app.get("/n/205-passthrough"), 205);
        assertNoBody(await app.get("/n/304-passthrough"), 304);
        assertNoBody(await app.get("/n/205-nothing"), 205);
      } finally {
        await app.close();
      }
    });

    it("a 1xx from @HttpCode is never followed by an envelope", async () => {
      const app = await bootApp(adapter);
      try {
        const reply = await app.get("/n/103");
        assert.equal(reply.status, 103, reply.raw);
        assert.doesNotMatch(reply.raw, /"success"|content-type/i, reply.raw);
        assert.equal(reply.body, "", reply.raw);
        assert.equal(reply.headers["x-request-id"], "rid-1", reply.raw);
      } finally {
        await app.close();
      }
    });

    it("a 200 keeps its envelope and a raw route its body", async () => {
      const app = await bootApp(adapter);
      try {
        const found = await app.get("/n/204-then-200");
        assert.equal(found.status, 200, found.raw);
        assert.equal(JSON.parse(found.body).success, true, found.raw);
        const ok = await app.get("/n/200");
        assert.equal(ok.status, 200);
        assert.match(ok.headers["content-type"], /^application\/json/);
        assert.equal(ok.headers.deprecation, DEPRECATION);
        const body = JSON.parse(ok.body);
        assert.equal(body.success, true);
        assert.deepEqual(body.data, { a: 1 });
        assert.equal(body.meta.rateLimit.remaining, 4);
        assert.deepEqual((await getJson(app.url, "/n/raw-200")).body, { raw: 1 });
      } finally {
        await app.close();
      }
    });
  });
}
