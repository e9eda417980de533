/**
 * The interceptor over HTTP, on Express and Fastify: what only the Nest
 * binding does on success. Streams and raw results pass through the reply;
 * the status comes from Nest (`@HttpCode`, a POST's 201, `SafeResponse`);
 * headers land on the Express or Fastify reply next to what middleware set;
 * a failing option is a logged generic 500 through the filter. Everything
 * the envelope holds is the core responder's (tests/safe_response/responder_test.ts).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Readable } from "node:stream";
import {
  Controller,
  Get,
  HttpCode,
  type MiddlewareConsumer,
  Module,
  type NestModule,
  NotFoundException,
  Post,
  Res,
  StreamableFile,
} from "@nestjs/common";
import { from, lastValueFrom, of } from "rxjs";
import { resolveSettings, Responder } from "../../../safe_response/mod.ts";
import {
  Deprecated,
  Paginated,
  RawResponse,
  SafeResponse,
} from "../../../safe_response/nest/safe_response.decorators.ts";
import { SafeResponseInterceptor } from "../../../safe_response/nest/_safe_response.interceptor.ts";
import { SafeResponseModule } from "../../../safe_response/nest/safe_response.module.ts";
import { collectUnhandledRejections } from "../../reliability/harness.ts";
import {
  ADAPTERS,
  boot,
  CapturingLogger,
  getJson,
  otherLinkMiddleware,
  STATUS_LINK,
} from "./helpers.ts";

const SUNSET = '<https://example.com/sunset>; rel="sunset"';

@Controller("e")
class ReplyController {
  @Get("raw")
  @RawResponse()
  @Deprecated({ sunsetLink: "https://example.com/sunset" })
  raw() {
    return "just text";
  }

  @Get("file")
  file() {
    return new StreamableFile(Readable.from(["chunk-1,", "chunk-2"]));
  }

  @Get("buffer")
  buffer() {
    return new StreamableFile(Buffer.from("buffer-bytes"));
  }

  @Get("page")
  @Paginated({ links: true, linkHeader: true })
  @Deprecated({ since: "2026-01-01T00:00:00Z" })
  page() {
    return { data: [1, 2], total: 6, page: 2, limit: 2 };
  }

  /** An Observable of two pages: Nest sends the last value. */
  @Get("pages")
  @Paginated({ links: true, linkHeader: true })
  pages() {
    return from([
      { data: [1], total: 10, page: 1, limit: 1 },
      { data: [5], total: 10, page: 5, limit: 1 },
    ]);
  }
}

@RawResponse()
@Controller("raw-class")
class RawController {
  @Get()
  raw() {
    return ["raw", "list"];
  }

  @Get("wrapped")
  @SafeResponse()
  wrapped() {
    return ["wrapped"];
  }
}

/** The reverse: a method's own RawResponse under a class-level SafeResponse (a method's own wins). */
@SafeResponse({ description: "Wrapped" })
@Controller("safe-class")
class SafeController {
  @Get()
  wrapped() {
    return ["wrapped"];
  }

  @Get("raw")
  @RawResponse()
  raw() {
    return ["raw"];
  }

  @Get("own")
  @SafeResponse({ statusCode: 202, description: "Accepted here" })
  own() {
    return ["own"];
  }
}

@Module({
  imports: [SafeResponseModule.register({ requestId: true })],
  controllers: [ReplyController, RawController, SafeController],
})
class ReplyModule implements NestModule {
  configure(consumer: MiddlewareConsumer) {
    consumer.apply(otherLinkMiddleware).forRoutes("e/*path");
  }
}

for (const adapter of ADAPTERS) {
  describe(`the interceptor's reply (${adapter})`, () => {
    it("passes raw results and streamed files through unwrapped", async () => {
      const { url, close } = await boot(ReplyModule, adapter);
      try {
        assert.equal(await (await fetch(`${url}/e/raw`)).text(), "just text");
        assert.equal(await (await fetch(`${url}/e/file`)).text(), "chunk-1,chunk-2");
        assert.equal(await (await fetch(`${url}/e/buffer`)).text(), "buffer-bytes");
        assert.deepEqual((await getJson(url, "/raw-class")).body, ["raw", "list"]);
        const wrapped = await getJson(url, "/raw-class/wrapped");
        assert.deepEqual(
          wrapped.body.data,
          ["wrapped"],
          "SafeResponse() overrides a class-level RawResponse",
        );
        assert.deepEqual((await getJson(url, "/safe-class")).body.data, ["wrapped"]);
        assert.deepEqual(
          (await getJson(url, "/safe-class/raw")).body,
          ["raw"],
          "a method's RawResponse() overrides a class-level SafeResponse",
        );
        const own = await getJson(url, "/safe-class/own");
        assert.equal(own.status, 202, "a method's own SafeResponse() keeps its status");
        assert.deepEqual(own.body.data, ["own"]);
      } finally {
        await close();
      }
    });

    it("an Observable of several values: only the last, which Nest sends, sets the headers (its Link agrees with its body)", async () => {
      const { url, close } = await boot(ReplyModule, adapter);
      try {
        const { body, headers } = await getJson(url, "/e/pages?page=5&limit=1");
        const meta = body.meta as { pagination: { page: number } };
        assert.equal(meta.pagination.page, 5);
        const link = headers.get("link") ?? "";
        assert.match(link, /page=6&limit=1>; rel="next"/);
        assert.match(link, /page=4&limit=1>; rel="prev"/);
        assert.doesNotMatch(link, /page=2&limit=1>; rel="next"/, "the first value's links");
      } finally {
        await close();
      }
    });

    it("sets its headers on the reply after a Link other middleware set, raw routes included", async () => {
      const { url, close } = await boot(ReplyModule, adapter);
      try {
        const page = await getJson(url, "/e/page?page=2&limit=2", {
          headers: { "x-request-id": "req-1" },
        });
        assert.equal(page.headers.get("deprecation"), "@1767225600");
        assert.equal(page.headers.get("x-request-id"), "req-1");
        assert.equal(page.body.requestId, "req-1");
        assert.equal(
          page.headers.get("link"),
          `${STATUS_LINK}, </e/page?page=1&limit=2>; rel="first", ` +
            '</e/page?page=1&limit=2>; rel="prev", </e/page?page=3&limit=2>; rel="next", ' +
            '</e/page?page=3&limit=2>; rel="last"',
        );
        const raw = await fetch(`${url}/e/raw`);
        assert.equal(await raw.text(), "just text");
        assert.equal(raw.headers.get("link"), `${STATUS_LINK}, ${SUNSET}`);
        assert.equal(raw.headers.get("deprecation"), "@0");
      } finally {
        await close();
      }
    });
  });
}

/** Set while the options below should fail; how they fail. */
let failing: "throws" | "rejects" | undefined;
const unless = <T>(value: T): T => {
  if (failing === "throws") throw new Error("option internals");
  return failing === "rejects" ? Promise.reject(new Error("option internals")) as T : value;
};

@Controller("cb")
class OptionsController {
  @Get("ok")
  ok() {
    return { ok: true };
  }

  @Post("accepted")
  @HttpCode(202)
  accepted() {
    return { queued: true };
  }
}

@Module({
  imports: [
    SafeResponseModule.register({
      successCodeMapper: (status) => unless(`S_${status}`),
      transformResponse: (data) => unless(data),
    }),
  ],
  controllers: [OptionsController],
})
class OptionsModule {}

for (const adapter of ADAPTERS) {
  describe(`options that fail on the success path (${adapter})`, () => {
    it("answer a logged generic 500 through the filter, never an unhandled rejection", async () => {
      const unhandled = collectUnhandledRejections();
      const logger = new CapturingLogger();
      const { url, close } = await boot(OptionsModule, adapter, { logger });
      try {
        await getJson(url, "/cb/ok"); // planned: from now on only transformResponse runs
        for (const kind of ["throws", "rejects"] as const) {
          failing = kind;
          // /cb/accepted is planned on its first request: the mapper fails there, once.
          for (const [path, method] of [["/cb/ok", "GET"], ["/cb/accepted", "POST"]]) {
            const { status, body } = await getJson(url, path, { method });
            assert.equal(status, 500, `${kind} ${path}`);
            assert.deepEqual(body.error, {
              code: "INTERNAL_SERVER_ERROR",
              message: "Internal Server Error",
            });
            assert.equal(JSON.stringify(body).includes("internals"), false);
          }
          failing = undefined;
          assert.equal((await getJson(url, "/cb/ok")).body.code, "S_200", "recovers");
        }
        assert.ok(logger.find("error", "option `transformResponse`").length >= 2);
        assert.ok(logger.find("error", "option `successCodeMapper`").length >= 1);
      } finally {
        failing = undefined;
        await close();
        await unhandled.stop();
      }
      assert.deepEqual(unhandled.reasons, []);
    });
  });
}

/**
 * A stored value of 3,000 nested arrays around an item: past the recursion of before (about 1,800
 * levels), within what Node 20's JSON.stringify sends (about 4,000).
 */
const DEPTH = 3_000;
let STORED: unknown = { id: 2, secret: "s" };
for (let level = 0; level < DEPTH; level++) STORED = [STORED];

@Controller("stored")
class StoredController {
  @Get()
  get() {
    return { id: 1, tags: STORED };
  }
}

@Module({
  imports: [SafeResponseModule.register({ timestamp: false, fieldSelection: true })],
  controllers: [StoredController],
})
class StoredModule {}

describe("field selection through stored deep arrays", () => {
  it("answers ?fields= over 3,000 nested arrays with a 200, as without it, and logs nothing", async () => {
    const logger = new CapturingLogger();
    const { url, close } = await boot(StoredModule, "express", { logger });
    try {
      const nested = (inner: string) => "[".repeat(DEPTH) + inner + "]".repeat(DEPTH);
      assert.equal((await getJson(url, "/stored")).status, 200);
      const picked = await fetch(`${url}/stored?fields=id,tags.id`);
      assert.equal(picked.status, 200);
      assert.ok((await picked.text()).includes(`"data":{"id":1,"tags":${nested('{"id":2}')}}`));
      assert.deepEqual(logger.find("error", ""), []);
    } finally {
      await close();
    }
  });
});

describe("the interceptor outside HTTP", () => {
  it("leaves RPC results untouched", async () => {
    const interceptor = new SafeResponseInterceptor(
      new Responder(resolveSettings()),
      undefined as never,
    );
    const host = { getType: () => "rpc" } as never;
    const result = await lastValueFrom(
      interceptor.intercept(host, { handle: () => of({ raw: 1 }) }),
    );
    assert.deepEqual(result, { raw: 1 });
  });
});

describe("HttpCode interplay", () => {
  it("reads @HttpCode for the envelope status", async () => {
    @Controller("h")
    class CodeController {
      @Post()
      @HttpCode(200)
      post() {
        return "x";
      }
    }
    @Module({ imports: [SafeResponseModule.register()], controllers: [CodeController] })
    class CodeModule {}
    const { url, close } = await boot(CodeModule, "express");
    try {
      const { status, body } = await getJson(url, "/h", { method: "POST" });
      assert.equal(status, 200);
      assert.equal(body.statusCode, 200);
    } finally {
      await close();
    }
  });
});

describe("SafeResponse status: the documented default (200) is what a POST answers", () => {
  @Controller("sr")
  class StatusController {
    @Post("default")
    @SafeResponse()
    byDefault() {
      return { id: "d1" };
    }

    @Post("http-code-below")
    @SafeResponse()
    @HttpCode(203)
    below() {
      return { id: "b1" };
    }

    @Post("http-code-above")
    @HttpCode(203)
    @SafeResponse()
    above() {
      return { id: "a1" };
    }

    @Post("plain")
    plain() {
      return { id: "p1" };
    }
  }

  @SafeResponse()
  @Controller("sr-class")
  class SafeClassController {
    @Post()
    create() {
      return { id: "c1" };
    }

    @Post("coded")
    @HttpCode(202)
    coded() {
      return { id: "c2" };
    }
  }

  @Module({
    imports: [SafeResponseModule.register()],
    controllers: [StatusController, SafeClassController],
  })
  class StatusModule {}

  for (const adapter of ADAPTERS) {
    it(`${adapter}: @Post() @SafeResponse() answers 200; @HttpCode and statusCode win`, async () => {
      const { url, close } = await boot(StatusModule, adapter);
      try {
        for (
          const [path, status] of [
            ["/sr/default", 200],
            ["/sr/http-code-below", 203],
            ["/sr/http-code-above", 203],
            ["/sr/plain", 201], // not decorated: Nest's default for POST
            ["/sr-class", 200],
            ["/sr-class/coded", 202],
          ] as const
        ) {
          const response = await getJson(url, path, { method: "POST" });
          assert.equal(response.status, status, path);
          assert.equal(response.body.statusCode, status, path);
        }
      } finally {
        await close();
      }
    });
  }

  it("a class-level SafeResponse({ statusCode }) sets the status of its routes (Express, Fastify)", async () => {
    @SafeResponse({ statusCode: 202 })
    @Controller("sr-accepted")
    class AcceptedController {
      @Post()
      accept() {
        return { queued: true };
      }

      @Post("now")
      @HttpCode(200)
      now() {
        return { done: true };
      }
    }
    @Module({ imports: [SafeResponseModule.register()], controllers: [AcceptedController] })
    class AcceptedModule {}
    for (const adapter of ADAPTERS) {
      const { url, close } = await boot(AcceptedModule, adapter);
      try {
        assert.equal((await getJson(url, "/sr-accepted", { method: "POST" })).status, 202);
        assert.equal((await getJson(url, "/sr-accepted/now", { method: "POST" })).status, 200);
      } finally {
        await close();
      }
    }
  });
});

@Controller("twice")
class TwiceController {
  @Get()
  ok() {
    return { ok: true };
  }

  @Get("missing")
  missing() {
    throw new NotFoundException("Not here");
  }
}

/** A feature module registering the module again, as a root module already does. */
@Module({ imports: [SafeResponseModule.register()] })
class FeatureModule {}

@Module({
  imports: [SafeResponseModule.register({ requestId: true }), FeatureModule],
  controllers: [ReplyController, TwiceController],
})
class TwiceModule implements NestModule {
  configure(consumer: MiddlewareConsumer) {
    consumer.apply(otherLinkMiddleware).forRoutes("e/*path");
  }
}

for (const adapter of ADAPTERS) {
  it(`${adapter}: the module registered in the root and a feature module answers once: one envelope, headers once`, async () => {
    const { url, close } = await boot(TwiceModule, adapter);
    try {
      const ok = await getJson(url, "/twice", { headers: { "x-request-id": "req-1" } });
      assert.equal(ok.status, 200);
      assert.deepEqual(ok.body.data, { ok: true });
      assert.equal(ok.body.requestId, "req-1");
      const missing = await getJson(url, "/twice/missing");
      assert.equal(missing.status, 404);
      assert.equal(missing.body.success, false);
      assert.equal((missing.body.error as { message: string }).message, "Not here");
      const raw = await fetch(`${url}/e/raw`);
      assert.equal(await raw.text(), "just text");
      assert.equal(raw.headers.get("link"), `${STATUS_LINK}, ${SUNSET}`);
      const page = await getJson(url, "/e/page?page=2&limit=2");
      assert.deepEqual(page.body.data, [1, 2]);
      assert.equal((page.headers.get("link") ?? "").split('rel="next"').length, 2);
    } finally {
      await close();
    }
  });
}

/** Sets `status` on an Express response or a Fastify reply. */
type StatusSetter = { status?: (status: number) => unknown; code?: (status: number) => unknown };
const setStatus = (response: StatusSetter, status: number) =>
  typeof response.code === "function" ? response.code(status) : response.status!(status);

describe("a status the handler sets (passthrough) wins, 200 included", () => {
  @Controller("set")
  class SetStatusController {
    @Post("post")
    post(@Res({ passthrough: true }) response: StatusSetter) {
      setStatus(response, 200);
      return { created: false };
    }

    @Get("http-code")
    @HttpCode(201)
    httpCode(@Res({ passthrough: true }) response: StatusSetter) {
      setStatus(response, 200);
      return 1;
    }

    @Get("safe")
    @SafeResponse({ statusCode: 202 })
    safe(@Res({ passthrough: true }) response: StatusSetter) {
      setStatus(response, 200);
      return 1;
    }

    @Post("accepted")
    accepted(@Res({ passthrough: true }) response: StatusSetter) {
      setStatus(response, 202);
      return 1;
    }

    @Post("untouched")
    untouched(@Res({ passthrough: true }) _response: StatusSetter) {
      return 1;
    }

    @Get("coded")
    @HttpCode(201)
    coded() {
      return 1;
    }
  }

  @Module({
    imports: [SafeResponseModule.register({ successCodeMapper: (status) => `S_${status}` })],
    controllers: [SetStatusController],
  })
  class SetStatusModule {}

  for (const adapter of ADAPTERS) {
    it(`${adapter}: the envelope's status and code are the status sent`, async () => {
      const { url, close } = await boot(SetStatusModule, adapter);
      try {
        for (
          const [method, path, status] of [
            ["POST", "/set/post", 200],
            ["GET", "/set/http-code", 200],
            ["GET", "/set/safe", 200],
            ["POST", "/set/accepted", 202],
            ["POST", "/set/untouched", 201], // nothing set: Nest's default for POST
            ["GET", "/set/coded", 201], // nothing set: the @HttpCode
          ] as const
        ) {
          const response = await getJson(url, path, { method });
          assert.equal(response.status, status, path);
          assert.equal(response.body.statusCode, status, path);
          assert.equal(response.body.code, `S_${status}`, path);
        }
      } finally {
        await close();
      }
    });
  }
});

describe("a handler that sends its own response (@Res() without passthrough)", () => {
  type Sender = { json?: (body: unknown) => unknown; send?: (body: unknown) => unknown };
  const send = (response: Sender, body: unknown) =>
    typeof response.json === "function" ? response.json(body) : response.send!(body);

  @Controller("own")
  class OwnController {
    @Get("deprecated")
    @Deprecated({ since: "2026-01-01T00:00:00Z", sunsetLink: "https://example.com/sunset" })
    deprecated(@Res() response: Sender) {
      send(response, { mine: 1 });
    }

    @Get("page")
    @Paginated({ linkHeader: true })
    @Deprecated({ since: "2026-01-01T00:00:00Z" })
    page(@Res() response: Sender) {
      send(response, { data: [1], total: 3, page: 1, limit: 1 });
    }
  }

  @Module({ imports: [SafeResponseModule.register()], controllers: [OwnController] })
  class OwnModule {}

  for (const adapter of ADAPTERS) {
    it(`${adapter}: gets the route's headers before the handler, its body untouched, nothing logged`, async () => {
      const logger = new CapturingLogger();
      const { url, close } = await boot(OwnModule, adapter, { logger });
      try {
        const deprecated = await fetch(`${url}/own/deprecated`);
        assert.deepEqual(await deprecated.json(), { mine: 1 });
        assert.equal(deprecated.headers.get("deprecation"), "@1767225600");
        assert.equal(deprecated.headers.get("link"), SUNSET);
        const page = await fetch(`${url}/own/page?page=1&limit=1`);
        assert.deepEqual(await page.json(), { data: [1], total: 3, page: 1, limit: 1 });
        assert.equal(page.headers.get("deprecation"), "@1767225600");
        await new Promise((done) => setTimeout(done, 20));
        assert.deepEqual(logger.entries.filter((entry) => entry.level === "error"), []);
      } finally {
        await close();
      }
    });
  }
});
