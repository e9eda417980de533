import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Readable } from "node:stream";
import {
  Body,
  type CanActivate,
  ConflictException,
  Controller,
  type ExecutionContext,
  Get,
  HttpCode,
  HttpException,
  Injectable,
  Module,
  Param,
  ParseIntPipe,
  Post,
  StreamableFile,
  UseGuards,
  ValidationPipe,
} from "@nestjs/common";
import { IsInt, IsString } from "class-validator";
import { ApiKeyError, ApiKeyStorageError } from "../../../api_keys/mod.ts";
import {
  Paginated,
  RawResponse,
  ResponseMessage,
  SafeResponse,
  SafeResponseModule,
  SuccessCode,
} from "../../../safe_response/nest/mod.ts";
import { SafeEndpoint } from "../../../safe_response/openapi/mod.ts";
import { ADAPTERS, boot, CapturingLogger, getJson } from "./helpers.ts";

const SECRET = "db-password-hunter2";

@Injectable()
class DenyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const mode = context.switchToHttp().getRequest().headers["x-deny"];
    if (mode === "coded") throw new ApiKeyError("api_key_scope_insufficient");
    if (mode === "unbranded") {
      throw Object.assign(new Error(`denied by ${SECRET}`), { code: "E_DENIED", httpStatus: 403 });
    }
    if (mode === "http") {
      throw new HttpException(
        {
          statusCode: 403,
          code: "api_key_scope_insufficient",
          message: "API key lacks the required scope",
        },
        403,
      );
    }
    if (mode === "storage") {
      throw new ApiKeyStorageError("findByPrefix", new Error(`storage down: ${SECRET}`));
    }
    return true;
  }
}

class CreateUserDto {
  @IsString()
  name!: string;

  @IsInt()
  age!: number;
}

@Controller("e")
@UseGuards(DenyGuard)
class EnvelopeController {
  @Get("plain")
  plain() {
    return { hello: "world" };
  }

  @Get("nothing")
  nothing() {}

  @Post("created")
  created() {
    return { id: "c1" };
  }

  @Post("order")
  @SuccessCode("ORDER_PLACED")
  @ResponseMessage("Order placed")
  order() {
    return { id: "o1" };
  }

  @Post("accepted")
  @SafeResponse({ statusCode: 202 })
  accepted() {
    return { queued: true };
  }

  @Post("endpoint")
  @SafeEndpoint(Object, { code: "DONE", message: "Done" })
  endpoint() {
    return { ok: true };
  }

  @Get("status/:status")
  status(@Param("status", ParseIntPipe) status: number) {
    throw new HttpException("status test", status);
  }

  @Get("conflict")
  conflict() {
    throw new ConflictException("Already there");
  }

  @Post("users")
  users(@Body(new ValidationPipe({ expectedType: CreateUserDto })) body: CreateUserDto) {
    return body;
  }

  @Get("raw")
  @RawResponse()
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

  @Get("throw/:kind")
  hostile(@Param("kind") kind: string) {
    if (kind === "string") throw `${SECRET} as a string`;
    if (kind === "null") throw null;
    if (kind === "circular") {
      const circular: Record<string, unknown> = { secret: SECRET };
      circular.self = circular;
      throw circular;
    }
    if (kind === "error") throw new TypeError(`cannot reach ${SECRET}`);
    const hostile = new Proxy({}, {
      get() {
        throw new Error(SECRET);
      },
    });
    throw hostile;
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

@Module({
  imports: [SafeResponseModule.register()],
  controllers: [EnvelopeController, RawController],
})
class DefaultsModule {}

const mapperCalls: Array<{ exception: unknown; context: unknown }> = [];

@Controller("o")
class OptionsController {
  @Get("missing")
  missing() {
    throw new HttpException("gone fishing", 404);
  }

  @Get("bad")
  bad() {
    throw new HttpException("bad", 400);
  }

  @Get("teapot")
  teapot() {
    throw new HttpException("short and stout", 418);
  }

  @Get("conflict")
  conflict() {
    throw new ConflictException();
  }

  @Post("created")
  created() {
    return 1;
  }

  @Post("order")
  @SuccessCode("ORDER_PLACED")
  order() {
    return 2;
  }

  @Get("ok")
  ok() {
    return 3;
  }

  @Get("items")
  @Paginated()
  items() {
    return { items: ["a", "b"], count: 2 };
  }
}

@Module({
  imports: [
    SafeResponseModule.register({
      errorCodes: { 404: "RESOURCE_NOT_FOUND", 418: "TEAPOT" },
      errorCodeMapper: (exception, context) => {
        mapperCalls.push({ exception, context });
        return context.statusCode === 409 ? `MAPPED_${context.defaultCode}` : undefined;
      },
      successCodeMapper: (statusCode) => (statusCode === 201 ? "CREATED" : undefined),
      transformResponse: (data) => {
        const value = data as { items?: unknown[]; count?: number };
        return value.items === undefined
          ? data
          : { data: value.items, total: value.count, page: 1, limit: 10 };
      },
      dateFormatter: (date) => `at:${date.getTime()}`,
    }),
  ],
  controllers: [OptionsController],
})
class OptionsModule {}

@Module({
  imports: [SafeResponseModule.register({ timestamp: false, path: false })],
  controllers: [OptionsController],
})
class BareModule {}

const DEFAULT_TABLE: Array<[number, string]> = [
  [400, "BAD_REQUEST"],
  [401, "UNAUTHORIZED"],
  [403, "FORBIDDEN"],
  [404, "NOT_FOUND"],
  [405, "METHOD_NOT_ALLOWED"],
  [409, "CONFLICT"],
  [422, "UNPROCESSABLE_ENTITY"],
  [429, "TOO_MANY_REQUESTS"],
  [500, "INTERNAL_SERVER_ERROR"],
  [502, "BAD_GATEWAY"],
  [503, "SERVICE_UNAVAILABLE"],
];

for (const adapter of ADAPTERS) {
  describe(`success and error envelopes, defaults (${adapter})`, () => {
    it("wraps results with statusCode, data, timestamp and path; 201 for POST", async () => {
      const { url, close } = await boot(DefaultsModule, adapter);
      try {
        const plain = await getJson(url, "/e/plain?q=1");
        assert.equal(plain.status, 200);
        assert.deepEqual(Object.keys(plain.body), [
          "success",
          "statusCode",
          "data",
          "timestamp",
          "path",
        ]);
        assert.equal(plain.body.success, true);
        assert.deepEqual(plain.body.data, { hello: "world" });
        assert.equal(plain.body.path, "/e/plain");
        assert.ok(!Number.isNaN(Date.parse(plain.body.timestamp as string)));
        assert.equal(new Date(plain.body.timestamp as string).toISOString(), plain.body.timestamp);

        const nothing = await getJson(url, "/e/nothing");
        assert.equal(nothing.body.data, null);

        const created = await getJson(url, "/e/created", { method: "POST" });
        assert.equal(created.status, 201);
        assert.equal(created.body.statusCode, 201);
        assert.equal(created.body.code, undefined);

        const order = await getJson(url, "/e/order", { method: "POST" });
        assert.equal(order.body.code, "ORDER_PLACED");
        assert.deepEqual(order.body.meta, { message: "Order placed" });

        const accepted = await getJson(url, "/e/accepted", { method: "POST" });
        assert.equal(accepted.status, 202);
        assert.equal(accepted.body.statusCode, 202);

        const endpoint = await getJson(url, "/e/endpoint", { method: "POST" });
        assert.equal(endpoint.status, 200, "SafeEndpoint statusCode defaults to 200");
        assert.equal(endpoint.body.code, "DONE");
        assert.deepEqual(endpoint.body.meta, { message: "Done" });
      } finally {
        await close();
      }
    });

    it("maps each status of the default table to its code, and unmapped ones to the fallback", async () => {
      const { url, close } = await boot(DefaultsModule, adapter);
      try {
        for (const [status, code] of DEFAULT_TABLE) {
          const { status: got, body } = await getJson(url, `/e/status/${status}`);
          assert.equal(got, status);
          assert.equal(body.success, false);
          assert.equal(body.statusCode, status);
          assert.deepEqual(body.error, { code, message: "status test" });
          assert.equal(body.path, `/e/status/${status}`);
          assert.equal(typeof body.timestamp, "string");
        }
        assert.deepEqual((await getJson(url, "/e/status/410")).body.error, {
          code: "GONE",
          message: "status test",
        });
        assert.equal(
          ((await getJson(url, "/e/status/418")).body.error as { code: string }).code,
          "I_AM_A_TEAPOT",
        );
        assert.equal(
          ((await getJson(url, "/e/status/599")).body.error as { code: string }).code,
          "HTTP_599",
        );
        const unknown = await getJson(url, "/no/such/route");
        assert.equal(unknown.status, 404);
        assert.equal((unknown.body.error as { code: string }).code, "NOT_FOUND");
      } finally {
        await close();
      }
    });

    it("puts validation messages in error.details with a fixed message", async () => {
      const { url, close } = await boot(DefaultsModule, adapter);
      try {
        const { status, body } = await getJson(url, "/e/users", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ name: 42 }),
        });
        assert.equal(status, 400);
        const error = body.error as { code: string; message: string; details: string[] };
        assert.equal(error.code, "BAD_REQUEST");
        assert.equal(error.message, "Validation failed");
        assert.ok(error.details.includes("name must be a string"));
        assert.ok(error.details.includes("age must be an integer number"));
      } finally {
        await close();
      }
    });

    it("recognises API-key errors by brand, thrown by a guard, and hides 5xx messages", async () => {
      const { url, close } = await boot(DefaultsModule, adapter);
      try {
        for (const mode of ["coded", "http"]) {
          const { status, body } = await getJson(url, "/e/plain", { headers: { "x-deny": mode } });
          assert.equal(status, 403, mode);
          assert.deepEqual(body.error, {
            code: "api_key_scope_insufficient",
            message: "API key lacks the required scope",
          });
        }
        const storage = await getJson(url, "/e/plain", { headers: { "x-deny": "storage" } });
        assert.equal(storage.status, 503);
        assert.deepEqual(storage.body.error, {
          code: "api_key_storage_unavailable",
          message: "Service Unavailable",
        });
        const unbranded = await getJson(url, "/e/plain", { headers: { "x-deny": "unbranded" } });
        assert.equal(unbranded.status, 500, "a { code, httpStatus } error of another library");
        assert.deepEqual(unbranded.body.error, {
          code: "INTERNAL_SERVER_ERROR",
          message: "Internal Server Error",
        });
      } finally {
        await close();
      }
    });

    it("turns hostile throws into well-formed 500 envelopes, logged once, leaking nothing", async () => {
      const logger = new CapturingLogger();
      const { url, close } = await boot(DefaultsModule, adapter, { logger });
      try {
        for (const kind of ["string", "null", "circular", "error", "proxy"]) {
          const response = await fetch(`${url}/e/throw/${kind}`);
          const text = await response.text();
          assert.equal(response.status, 500, kind);
          assert.ok(!text.includes(SECRET), kind);
          assert.ok(!text.includes("TypeError"), kind);
          assert.ok(!text.includes("at "), kind);
          const body = JSON.parse(text);
          assert.equal(body.success, false);
          assert.deepEqual(body.error, {
            code: "INTERNAL_SERVER_ERROR",
            message: "Internal Server Error",
          });
        }
        assert.equal(logger.find("error", "TypeError: cannot reach").length, 1);
        assert.equal(logger.find("error", "Non-error thrown: null").length, 1);
      } finally {
        await close();
      }
    });

    it("passes raw results and streamed files through unwrapped", async () => {
      const { url, close } = await boot(DefaultsModule, adapter);
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
      } finally {
        await close();
      }
    });
  });

  describe(`envelope options (${adapter})`, () => {
    it("merges errorCodes, calls errorCodeMapper with statusCode and defaultCode", async () => {
      mapperCalls.length = 0;
      const { url, close } = await boot(OptionsModule, adapter);
      try {
        const missing = await getJson(url, "/o/missing");
        assert.deepEqual(missing.body.error, {
          code: "RESOURCE_NOT_FOUND",
          message: "gone fishing",
        });
        assert.equal(
          ((await getJson(url, "/o/bad")).body.error as { code: string }).code,
          "BAD_REQUEST",
        );
        assert.equal(
          ((await getJson(url, "/o/teapot")).body.error as { code: string }).code,
          "TEAPOT",
        );
        const conflict = await getJson(url, "/o/conflict");
        assert.equal((conflict.body.error as { code: string }).code, "MAPPED_CONFLICT");
        const call = mapperCalls.find((entry) => entry.exception instanceof ConflictException);
        assert.deepEqual(call?.context, { statusCode: 409, defaultCode: "CONFLICT" });
        const missingCall = mapperCalls.find((entry) =>
          (entry.context as { statusCode: number }).statusCode === 404
        );
        assert.deepEqual(missingCall?.context, {
          statusCode: 404,
          defaultCode: "RESOURCE_NOT_FOUND",
        });
      } finally {
        await close();
      }
    });

    it("uses successCodeMapper unless SuccessCode is set; formats dates; transforms before pagination", async () => {
      const { url, close } = await boot(OptionsModule, adapter);
      try {
        const created = await getJson(url, "/o/created", { method: "POST" });
        assert.equal(created.body.code, "CREATED");
        assert.equal(
          (await getJson(url, "/o/order", { method: "POST" })).body.code,
          "ORDER_PLACED",
        );
        const ok = await getJson(url, "/o/ok");
        assert.equal(ok.body.code, undefined);
        assert.match(ok.body.timestamp as string, /^at:\d+$/);
        assert.match((await getJson(url, "/o/missing")).body.timestamp as string, /^at:\d+$/);
        const items = await getJson(url, "/o/items");
        assert.deepEqual(items.body.data, ["a", "b"]);
        assert.deepEqual(items.body.meta, {
          pagination: {
            type: "offset",
            page: 1,
            limit: 10,
            total: 2,
            totalPages: 1,
            hasNext: false,
            hasPrev: false,
          },
        });
      } finally {
        await close();
      }
    });

    it("leaves out timestamp and path when turned off", async () => {
      const { url, close } = await boot(BareModule, adapter);
      try {
        const ok = await getJson(url, "/o/ok");
        assert.deepEqual(ok.body, { success: true, statusCode: 200, data: 3 });
        const missing = await getJson(url, "/o/missing");
        assert.deepEqual(missing.body, {
          success: false,
          statusCode: 404,
          error: { code: "NOT_FOUND", message: "gone fishing" },
        });
      } finally {
        await close();
      }
    });
  });
}

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
