import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { eventually } from "../../eventually.ts";
import {
  type ArgumentsHost,
  Catch,
  Controller,
  type ExceptionFilter,
  Get,
  Inject,
  Injectable,
  Module,
  NotFoundException,
  UseFilters,
} from "@nestjs/common";
import { APP_FILTER } from "@nestjs/core";
import { SafeResponseModule } from "../../../safe_response/nest/safe_response.module.ts";
import { RawResponse } from "../../../safe_response/nest/safe_response.decorators.ts";
import { SafeEndpoint } from "../../../safe_response/openapi/mod.ts";
import { SafeResponseFilter } from "../../../safe_response/nest/safe_response.filter.ts";
import { Responder } from "../../../safe_response/responder.ts";
import { SafeResponseInterceptor } from "../../../safe_response/nest/_safe_response.interceptor.ts";
import { type ResponderTaps, tapsOf } from "../../../telemetry/_taps.ts";
import { ADAPTERS, boot, CapturingLogger, getJson } from "./helpers.ts";

const CONFIG = "TEST_CONFIG";

@Injectable()
class ConfigService {
  readonly header = "X-Trace";
}

@Module({ providers: [{ provide: CONFIG, useClass: ConfigService }], exports: [CONFIG] })
class ConfigModule {}

@Controller("m")
class ModuleController {
  @Get()
  get() {
    return "async";
  }

  @Get("missing")
  missing() {
    throw new NotFoundException("Not here");
  }

  @Get("endpoint")
  @SafeEndpoint(Object, { problemDetails: true })
  endpoint() {
    return "documented as problem details";
  }

  @Get("raw")
  @RawResponse()
  raw() {
    return { raw: true };
  }
}

@Module({
  imports: [
    SafeResponseModule.registerAsync({
      imports: [ConfigModule],
      inject: [CONFIG],
      useFactory: async (config: ConfigService) => {
        await Promise.resolve();
        return { requestId: { headerName: config.header }, timestamp: false };
      },
    }),
  ],
  controllers: [ModuleController],
})
class AsyncModule {}

@Module({
  imports: [
    SafeResponseModule.registerAsync({
      useFactory: () => ({ problemDetails: "yes" as unknown as boolean }),
    }),
  ],
  controllers: [ModuleController],
})
class BadAsyncModule {}

@Module({ imports: [SafeResponseModule.register()], controllers: [ModuleController] })
class PlainModule {}

describe("SafeResponseModule.register option validation", () => {
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ timestamp: "no" }, /option `timestamp` must be a boolean/],
    [{ requestId: { headerName: "bad header" } }, /option `requestId.headerName`/],
    [{ requestId: { header: "X" } }, /option `requestId.header`/],
    [
      { problemDetails: { baseUrl: "not a url" } },
      /option `problemDetails.baseUrl` must be an absolute URL/,
    ],
    [{ errorCodes: { 999: "X" } }, /option `errorCodes.999`/],
    [{ errorCodes: { 404: "" } }, /option `errorCodes.404` must be a non-empty string/],
    [{ i18n: { translate: () => "" } }, /option `i18n`/],
    [{ rateLimit: { headerPrefix: "Rate Limit" } }, /option `rateLimit.headerPrefix`/],
    [{ context: { fields: { traceId: 1 } } }, /option `context.fields.traceId`/],
    [{ swagger: { globalErrors: [200] } }, /option `swagger.globalErrors`/],
    [{ dateFormatter: "iso" }, /option `dateFormatter` must be a function/],
    [{ requestID: true }, /unknown option `requestID`/],
    [{ errorCatalog: {} }, /errorCatalog/],
    [{ fieldSelection: { maxDepth: 0 } }, /option fieldSelection\.maxDepth must be an integer/],
    [{ version: "" }, /option `version`/],
    [{ version: 2 }, /option `version`/],
  ];
  for (const [options, message] of cases) {
    it(`rejects ${JSON.stringify(options)}`, () => {
      assert.throws(() => SafeResponseModule.register(options), { name: "TypeError", message });
    });
  }

  it("rejects registerAsync without a factory", () => {
    assert.throws(
      () => SafeResponseModule.registerAsync({} as never),
      /registerAsync: `useFactory` must be a function/,
    );
  });
});

for (const adapter of ADAPTERS) {
  describe(`SafeResponseModule wiring (${adapter})`, () => {
    it("registerAsync resolves options from injected providers", async () => {
      const { url, close } = await boot(AsyncModule, adapter);
      try {
        const { headers, body } = await getJson(url, "/m", { headers: { "x-trace": "t-9" } });
        assert.deepEqual(body, {
          success: true,
          statusCode: 200,
          requestId: "t-9",
          data: "async",
          path: "/m",
        });
        assert.equal(headers.get("x-trace"), "t-9");
        const missing = await getJson(url, "/m/missing");
        assert.equal(missing.body.requestId, missing.headers.get("x-trace"));
        assert.equal(missing.body.timestamp, undefined);
      } finally {
        await close();
      }
    });

    it("an importing module injects the replying Responder by its class", async () => {
      @Injectable()
      class Holder {
        constructor(@Inject(Responder) readonly responder: Responder) {}
      }
      @Module({
        imports: [SafeResponseModule.register({ requestId: { headerName: "X-Held" } })],
        controllers: [ModuleController],
        providers: [Holder],
      })
      class HolderModule {}
      const { app, url, close } = await boot(HolderModule, adapter);
      try {
        const { responder } = app.get(Holder);
        assert.ok(responder instanceof Responder);
        assert.equal(app.get(Responder, { strict: false }), responder, "one responder");
        assert.equal(responder.settings.requestId?.headerName, "X-Held");
        // The injected one is the one replying: its reports reach a tap set on it, one per
        // response written (a raw route's too).
        const seen: number[] = [];
        const taps = tapsOf<ResponderTaps>(responder)!;
        taps.response = (status) => seen.push(status);
        await getJson(url, "/m");
        await getJson(url, "/m/missing");
        await getJson(url, "/m/raw");
        // Counted as each response closes, which may come after the client read it.
        await eventually(() => seen.length >= 3, "three responses counted");
        assert.deepEqual(seen, [200, 404, 200]);
      } finally {
        await close();
      }
    });

    it("the request-id middleware sends a random UUID when the generator fails or returns an unsafe id", async () => {
      const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
      const generators: Array<() => unknown> = [
        () => "bad\nid",
        () => 42,
        () => {
          throw new Error("boom");
        },
      ];
      for (const generator of generators) {
        @Module({
          imports: [SafeResponseModule.register({
            requestId: { generator: generator as () => string },
            timestamp: false,
          })],
          controllers: [ModuleController],
        })
        class GeneratorModule {}
        const { url, close } = await boot(GeneratorModule, adapter);
        try {
          for (const [path, status] of [["/m", 200], ["/m/missing", 404]] as const) {
            const sent = await getJson(url, path);
            assert.equal(sent.status, status, `${generator} ${path}`);
            assert.match(String(sent.body.requestId), uuid);
            assert.equal(sent.headers.get("x-request-id"), sent.body.requestId);
          }
        } finally {
          await close();
        }
      }
    });

    it("registerAsync validates the factory's options at startup", async () => {
      await assert.rejects(
        boot(BadAsyncModule, adapter),
        /option `problemDetails` must be a boolean or an object/,
      );
    });

    it("registerAsync refuses a factory result that is not an object, undefined too, at startup", async () => {
      // A factory `() => { ... }` without `return` gives undefined: not the defaults.
      const results: [string, () => unknown][] = [
        ["undefined", () => undefined],
        ["a promise of undefined", () => Promise.resolve(undefined)],
        ["null", () => null],
        ["a string", () => "problemDetails"],
        ["an array", () => []],
      ];
      for (const [what, useFactory] of results) {
        @Module({
          imports: [SafeResponseModule.registerAsync({ useFactory: useFactory as never })],
          controllers: [ModuleController],
        })
        class ResultModule {}
        // Closed when it boots anyway, so the failure leaves no server behind.
        const booted = boot(ResultModule, adapter).then((running) => running.close());
        await assert.rejects(booted, (error: Error) => {
          assert.equal(error.name, "TypeError", what);
          assert.equal(error.message, "SafeResponseModule: options must be an object", what);
          return true;
        });
      }
    });

    it("warns once when a composite's problemDetails flag disagrees with the module", async () => {
      const logger = new CapturingLogger();
      const { url, close } = await boot(PlainModule, adapter, { logger });
      try {
        await getJson(url, "/m/endpoint");
        await getJson(url, "/m/endpoint");
        assert.equal(
          logger.find("warn", "ModuleController.endpoint: the endpoint's problemDetails").length,
          1,
        );
      } finally {
        await close();
      }
    });
  });
}

describe("without emitDecoratorMetadata", () => {
  it("boots with every injectable resolved from explicit tokens", async () => {
    for (
      const target of [
        SafeResponseInterceptor,
        SafeResponseFilter,
        SafeResponseModule,
      ]
    ) {
      Reflect.deleteMetadata("design:paramtypes", target);
      assert.equal(Reflect.getMetadata("design:paramtypes", target), undefined);
    }
    for (const adapter of ADAPTERS) {
      @Controller("n")
      class NoMetadataController {
        constructor(@Inject(CONFIG) readonly config: ConfigService) {}
        @Get()
        get() {
          return this.config.header;
        }
        @Get("missing")
        missing() {
          throw new NotFoundException();
        }
      }
      @Module({
        imports: [ConfigModule, SafeResponseModule.register({ requestId: true })],
        controllers: [NoMetadataController],
      })
      class NoMetadataModule {}
      const { url, close } = await boot(NoMetadataModule, adapter);
      try {
        const ok = await getJson(url, "/n");
        assert.equal(ok.body.data, "X-Trace");
        assert.equal(typeof ok.body.requestId, "string");
        const missing = await getJson(url, "/n/missing");
        assert.equal((missing.body.error as { code: string }).code, "NOT_FOUND");
      } finally {
        await close();
      }
    }
  });
});

class TeapotError extends Error {}

/** An app's own filter for its own error: a 418 of its own shape. */
@Catch(TeapotError)
class TeapotFilter implements ExceptionFilter {
  catch(_error: TeapotError, host: ArgumentsHost) {
    const response = host.switchToHttp().getResponse();
    const body = JSON.stringify({ teapot: true });
    // Express's `status().json()`, Fastify's `code().send()`.
    if (typeof response.code === "function") {
      response.code(418).header("content-type", "application/json").send(body);
    } else response.status(418).json({ teapot: true });
  }
}

@Controller("teapot")
class TeapotController {
  @Get()
  brew() {
    throw new TeapotError("short and stout");
  }

  @Get("scoped")
  @UseFilters(TeapotFilter)
  scoped() {
    throw new TeapotError("short and stout");
  }
}

describe("the app's own exception filters (docs/safe-response-nest.md)", () => {
  @Module({
    imports: [SafeResponseModule.register()],
    controllers: [TeapotController],
    providers: [{ provide: APP_FILTER, useClass: TeapotFilter }],
  })
  class RootFilterModule {}

  for (const adapter of ADAPTERS) {
    it(`an APP_FILTER of the root module is answered by the module's catch-all; @UseFilters and useGlobalFilters run first (${adapter})`, async () => {
      const root = await boot(RootFilterModule, adapter);
      try {
        const shadowed = await getJson(root.url, "/teapot");
        assert.equal(shadowed.status, 500);
        assert.equal((shadowed.body.error as { code: string }).code, "INTERNAL_SERVER_ERROR");
        const scoped = await getJson(root.url, "/teapot/scoped");
        assert.deepEqual([scoped.status, scoped.body], [418, { teapot: true }]);
      } finally {
        await root.close();
      }
      const global = await boot(RootFilterModule, adapter, {
        before: (app) => app.useGlobalFilters(new TeapotFilter()),
      });
      try {
        const answered = await getJson(global.url, "/teapot");
        assert.deepEqual([answered.status, answered.body], [418, { teapot: true }]);
        const other = await getJson(global.url, "/missing-route");
        assert.equal(
          (other.body.error as { code: string }).code,
          "NOT_FOUND",
          "the rest still ours",
        );
      } finally {
        await global.close();
      }
    });
  }
});
