/**
 * The exception filter over HTTP, on Express and Fastify: what only the Nest
 * binding does on errors. Problem details leave with their media type on the
 * Express or Fastify reply; errors thrown before the handler (guards, an
 * unknown route) carry no route meta (spec rule 3) but the request id; any
 * thrown value is a logged 500; a `Link` other middleware set is kept; a
 * catalog error is sent as OpenAPI documents it. Everything the body holds
 * is the core responder's (tests/safe_response/responder_test.ts).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  BadRequestException,
  Controller,
  ForbiddenException,
  Get,
  HttpException,
  Injectable,
  type MiddlewareConsumer,
  Module,
  type NestModule,
  NotFoundException,
  Param,
  UseGuards,
} from "@nestjs/common";
import { ExternalContextCreator, NestFactory } from "@nestjs/core";
import { DocumentBuilder, SwaggerModule } from "@nestjs/swagger";
import { lastValueFrom } from "rxjs";
import { isError, isProblemDetailsResponse } from "../../../client/mod.ts";
import { defineErrors, resolveSettings, Responder } from "../../../safe_response/mod.ts";
import {
  Deprecated,
  Paginated,
  ProblemType,
} from "../../../safe_response/nest/safe_response.decorators.ts";
import { SafeResponseFilter } from "../../../safe_response/nest/safe_response.filter.ts";
import { SafeResponseModule } from "../../../safe_response/nest/safe_response.module.ts";
import { ApiSafeCatalogErrors } from "../../../safe_response/openapi/mod.ts";
import {
  ADAPTERS,
  boot,
  CapturingLogger,
  getJson,
  headerDenyGuard,
  otherLinkMiddleware,
  STATUS_LINK,
} from "./helpers.ts";

const HeaderGuard = headerDenyGuard(() => new ForbiddenException("Denied by guard"));
const SECRET = "db-password-hunter2";
/** A key of the built-in legacy layout the module is told about (`legacyKeyLayouts`). */
const LEGACY_KEY = `ak_live_${"A".repeat(12)}_${"b".repeat(32)}`;
const SUNSET = '<https://example.com/sunset>; rel="sunset"';

const Errors = defineErrors({
  USER_NOT_FOUND: { status: 404, message: "User not found" },
  KEY_REVOKED: { status: 401, message: "Key revoked" },
});
const Outage = defineErrors({ DB_DOWN: { status: 503, message: "Try again later" } });

/** A database driver's error: an internal message and a foreign code. */
class DriverError extends Error {
  code = "P2002";
  constructor() {
    super(`Unique constraint failed in /srv/app/users.service.ts:42 (${SECRET})`);
  }
}

@Controller("p")
@UseGuards(HeaderGuard)
class ProblemController {
  @Get("missing")
  missing() {
    throw new NotFoundException("No such item");
  }

  @Get("typed")
  @ProblemType("https://errors.example.com/payment-required")
  @Deprecated({ since: "2026-01-01T00:00:00Z", sunsetLink: "https://example.com/sunset" })
  typed() {
    throw new NotFoundException("Payment item missing");
  }

  @Get("big")
  @Paginated({ links: true, linkHeader: true })
  @Deprecated({ since: "2026-01-01T00:00:00Z", sunsetLink: "https://example.com/sunset" })
  big() {
    return { data: [{ id: 1n }], total: 3, page: 1, limit: 1 }; // a BigInt: JSON fails after the interceptor
  }

  @Get("user")
  @ApiSafeCatalogErrors(Errors, ["USER_NOT_FOUND", "KEY_REVOKED"])
  user() {
    throw Errors.exception("USER_NOT_FOUND");
  }

  @Get("wrapped/:status")
  wrapped(@Param("status") status: string) {
    if (status === "400") throw new BadRequestException(new DriverError());
    throw new HttpException(new DriverError(), Number(status));
  }

  @Get("outage")
  outage() {
    throw Outage.exception("DB_DOWN", { cause: new Error(`ECONNREFUSED for ${LEGACY_KEY}`) });
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
    if (kind === "legacy") throw new Error(`upstream refused ${LEGACY_KEY}`);
    throw new Proxy({}, {
      get() {
        throw new Error(SECRET);
      },
    });
  }
}

function appModule(problemDetails: boolean) {
  @Module({
    imports: [
      SafeResponseModule.register({
        problemDetails,
        requestId: true,
        responseTime: true,
        errorCatalog: Errors,
        timestamp: false,
        path: false,
        legacyKeyLayouts: ["nestarc-v0"],
      }),
    ],
    controllers: [ProblemController],
  })
  class ProblemModule implements NestModule {
    configure(consumer: MiddlewareConsumer) {
      consumer.apply(otherLinkMiddleware).forRoutes("p/typed", "p/big");
    }
  }
  return ProblemModule;
}

const PROBLEM_JSON = "application/problem+json; charset=utf-8";

for (const adapter of ADAPTERS) {
  describe(`the filter's reply (${adapter})`, () => {
    it("sends problem details as application/problem+json, an unknown route's too", async () => {
      const { url, close } = await boot(appModule(true), adapter);
      try {
        const { status, headers, body } = await getJson(url, "/p/missing?x=1");
        assert.equal(status, 404);
        assert.equal(headers.get("content-type"), PROBLEM_JSON); // as the Fetch binding sends it
        const { requestId, meta, ...rest } = body;
        assert.deepEqual(rest, {
          type: "about:blank",
          title: "Not Found",
          status: 404,
          detail: "No such item",
          instance: "/p/missing",
          code: "NOT_FOUND",
        });
        assert.equal(requestId, headers.get("x-request-id"));
        assert.equal(typeof (meta as { responseTime: number }).responseTime, "number");
        const unknown = await getJson(url, "/no/route", { headers: { "x-request-id": "r-1" } });
        assert.equal(unknown.status, 404);
        assert.equal(unknown.headers.get("content-type"), PROBLEM_JSON);
        assert.equal(unknown.headers.get("x-request-id"), "r-1");
        assert.equal(unknown.body.requestId, "r-1");
        assert.equal(unknown.body.meta, undefined);
      } finally {
        await close();
      }
    });

    it("leaves the route's meta, headers and problem type out of guard errors (rule 3), keeping a Link set before", async () => {
      const { url, close } = await boot(appModule(true), adapter);
      try {
        const handler = await getJson(url, "/p/typed");
        assert.equal(handler.body.type, "https://errors.example.com/payment-required");
        assert.equal(handler.headers.get("deprecation"), "@1767225600");
        assert.equal(handler.headers.get("link"), `${STATUS_LINK}, ${SUNSET}`);
        assert.notEqual((handler.body.meta as Record<string, unknown>).deprecation, undefined);
        const guarded = await getJson(url, "/p/typed", { headers: { "x-deny": "1" } });
        assert.equal(guarded.status, 403);
        assert.equal(guarded.body.type, "about:blank");
        assert.equal(guarded.body.detail, "Denied by guard");
        assert.equal(guarded.body.meta, undefined);
        assert.equal(guarded.headers.get("deprecation"), null);
        assert.equal(guarded.headers.get("link"), STATUS_LINK);
        assert.equal(typeof guarded.body.requestId, "string", "ids are assigned before guards");
        assert.equal(guarded.body.requestId, guarded.headers.get("x-request-id"));
      } finally {
        await close();
      }
    });

    it("drops the success's pagination Link from the 500 of a failed serialisation", async () => {
      for (const problemDetails of [false, true]) {
        const { url, close } = await boot(appModule(problemDetails), adapter, {
          logger: new CapturingLogger(),
        });
        try {
          const { status, headers } = await getJson(url, "/p/big");
          assert.equal(status, 500);
          assert.equal(headers.get("link"), `${STATUS_LINK}, ${SUNSET}`); // no rel="next"
          assert.equal(headers.get("deprecation"), "@1767225600");
        } finally {
          await close();
        }
      }
    });

    it("sends an HTTP exception whose body is an Error with its status's title and code only", async () => {
      for (const problemDetails of [false, true]) {
        const { url, close } = await boot(appModule(problemDetails), adapter);
        try {
          for (
            const [status, code, title] of [[400, "BAD_REQUEST", "Bad Request"], [
              409,
              "CONFLICT",
              "Conflict",
            ]] as const
          ) {
            const response = await fetch(`${url}/p/wrapped/${status}`);
            const text = await response.text();
            assert.equal(response.status, status);
            for (const leak of [SECRET, "/srv/app", "P2002"]) assert.ok(!text.includes(leak), text);
            const body = JSON.parse(text);
            const sent = problemDetails
              ? [body.code, body.detail, body.type]
              : [body.error.code, body.error.message];
            assert.deepEqual(sent, problemDetails ? [code, title, "about:blank"] : [code, title]);
          }
        } finally {
          await close();
        }
      }
    });

    it("turns any thrown value into a well-formed 500, logged once, leaking nothing; logs a 5xx catalog error's cause", async () => {
      const logger = new CapturingLogger();
      const { url, close } = await boot(appModule(false), adapter, { logger });
      try {
        for (const kind of ["string", "null", "circular", "error", "proxy"]) {
          const response = await fetch(`${url}/p/throw/${kind}`);
          const text = await response.text();
          assert.equal(response.status, 500, kind);
          assert.ok(!text.includes(SECRET), kind);
          assert.ok(!text.includes("TypeError"), kind);
          assert.deepEqual(JSON.parse(text).error, {
            code: "INTERNAL_SERVER_ERROR",
            message: "Internal Server Error",
          });
        }
        assert.equal(logger.find("error", "TypeError: cannot reach").length, 1);
        assert.equal(logger.find("error", "Non-error thrown: null").length, 1);
        const legacy = await fetch(`${url}/p/throw/legacy`);
        await legacy.body?.cancel();
        assert.equal(legacy.status, 500);
        const logged = logger.find("error", "upstream refused [REDACTED_API_KEY]");
        assert.equal(logged.length, 1, "a legacy key is redacted from the line and its stack");
        const outage = await fetch(`${url}/p/outage`);
        const text = await outage.text();
        assert.equal(outage.status, 503);
        assert.deepEqual(JSON.parse(text).error, { code: "DB_DOWN", message: "Try again later" });
        assert.ok(!text.includes("ECONNREFUSED"), "the cause is never sent");
        const cause = logger.find("error", "caused by Error: ECONNREFUSED for [REDACTED_API_KEY]");
        assert.equal(cause.length, 1);
        assert.ok(!logger.entries.some((entry) => entry.message.includes(LEGACY_KEY)));
      } finally {
        await close();
      }
    });
  });
}

/** A module whose error reply cannot be built: in the envelope its timestamp, in problem details its type URI. */
function unbuildableModule(problemDetails: boolean) {
  @Module({
    imports: [
      SafeResponseModule.register(
        problemDetails
          ? {
            requestId: true,
            problemDetails: { baseUrl: "https://api.example.com/problems" },
            errorCodeMapper: (_error, { defaultCode }) => `${defaultCode}\uD800`, // not a URI
          }
          : {
            requestId: true,
            timestamp: true,
            dateFormatter: () => {
              throw new Error("no clock");
            },
          },
      ),
    ],
    controllers: [ProblemController],
  })
  class UnbuildableModule {}
  return UnbuildableModule;
}

for (const adapter of ADAPTERS) {
  describe(`the filter's last-resort 500 (${adapter})`, () => {
    it("carries the request id, in header and body, and the format's media type", async () => {
      for (const problemDetails of [false, true]) {
        const logger = new CapturingLogger();
        const { url, close } = await boot(unbuildableModule(problemDetails), adapter, { logger });
        try {
          for (const path of ["/p/missing", "/no/route"]) {
            const { status, headers, body } = await getJson(url, path, {
              headers: { "x-request-id": "req-1" },
            });
            const label = `${problemDetails ? "problem details" : "envelope"} ${path}`;
            assert.equal(status, 500, label);
            assert.equal(headers.get("x-request-id"), "req-1", label);
            assert.equal(body.requestId, "req-1", label);
            if (problemDetails) {
              assert.equal(headers.get("content-type"), PROBLEM_JSON, label);
              assert.equal(isProblemDetailsResponse(body), true, label);
            } else {
              assert.match(headers.get("content-type") ?? "", /^application\/json/, label);
              assert.equal(isError(body), true, label);
            }
          }
          assert.equal(logger.find("error", problemDetails ? "URI" : "no clock").length, 2);
        } finally {
          await close();
        }
      }
    });
  });
}

// deno-lint-ignore no-explicit-any
type Json = Record<string, any>;

describe("the filter and OpenAPI", () => {
  it("sends a catalog error as ApiSafeCatalogErrors documents it", async () => {
    const app = await boot(appModule(false), "express");
    try {
      const document = SwaggerModule.createDocument(app.app, new DocumentBuilder().build());
      const responses = (document.paths["/p/user"].get as Json).responses;
      const sent = await getJson(app.url, "/p/user");
      const { requestId: _, meta: __, ...body } = sent.body;
      const example = responses["404"].content["application/json"].examples.USER_NOT_FOUND.value;
      assert.deepEqual(example, body);
      assert.equal(
        responses["401"].content["application/json"].examples.KEY_REVOKED.value.error.code,
        "KEY_REVOKED",
      );
    } finally {
      await app.close();
    }
  });
});

describe("the filter outside HTTP", () => {
  /** A database error whose enumerable fields must not reach an RPC or WebSocket client. */
  class DbError extends Error {
    detail = "Key (email)=(alice@corp.example) already exists.";
    connection = "postgres://app:S3cret@db.internal:5432/prod";
  }
  // Stand-ins of @nestjs/microservices' RpcException and @nestjs/websockets' WsException
  // (matched by class name: the library depends on neither package).
  class RpcException extends Error {
    constructor(private readonly error: string | object) {
      super(typeof error === "string" ? error : "Rpc Exception");
    }
    getError() {
      return this.error;
    }
  }
  class WsException extends RpcException {}
  class OwnRpcException extends RpcException {}
  const INTERNAL = { status: "error", message: "Internal server error" };

  function filterLogging(): [SafeResponseFilter, CapturingLogger] {
    const logger = new CapturingLogger();
    return [
      new SafeResponseFilter(new Responder(resolveSettings(), { logger }), undefined as never),
      logger,
    ];
  }
  const rpcHost = { getType: () => "rpc" } as never;
  function wsHost(emitted: unknown[][], native = false) {
    const client = native
      ? { readyState: 1, send: (text: string) => emitted.push(["send", JSON.parse(text)]) }
      : { emit: (...args: unknown[]) => emitted.push(args) };
    const ws = {
      getClient: () => client,
      getPattern: () => "orders.create",
      getData: () => ({ n: 1 }),
    };
    return { getType: () => "ws", switchToWs: () => ws } as never;
  }

  it("answers an RPC client as Nest does: an unknown error is a generic one, logged", async () => {
    const [filter, logger] = filterLogging();
    const failure = new DbError("duplicate key");
    await assert.rejects(lastValueFrom(filter.catch(failure, rpcHost)!), (error) => {
      assert.deepEqual(error, INTERNAL);
      return true;
    });
    assert.equal(logger.find("error", "duplicate key").length, 1);
  });

  it("logs no IntrinsicException, known by its class's name (Nest 10's @nestjs/common has no such export)", async () => {
    const [filter, logger] = filterLogging();
    // A class of that name: Nest 11's, or its stand-in (nothing imports the export).
    class IntrinsicException extends Error {}
    class Quiet extends IntrinsicException {}
    await assert.rejects(lastValueFrom(filter.catch(new Quiet("quiet"), rpcHost)!), (error) => {
      assert.deepEqual(error, INTERNAL);
      return true;
    });
    assert.equal(logger.entries.length, 0);
  });

  it("sends an RpcException's error (a string wrapped as Nest does), subclasses too", async () => {
    const [filter, logger] = filterLogging();
    const cases: [Error, unknown][] = [
      [new RpcException("order not found"), { status: "error", message: "order not found" }],
      [new OwnRpcException({ code: "E1", message: "m" }), { code: "E1", message: "m" }],
    ];
    for (const [thrown, expected] of cases) {
      await assert.rejects(lastValueFrom(filter.catch(thrown, rpcHost)!), (error) => {
        assert.deepEqual(error, expected);
        return true;
      });
    }
    assert.equal(logger.entries.length, 0);
  });

  it("emits `exception` to a WebSocket client as Nest does, with the message that caused it", () => {
    const [filter] = filterLogging();
    const emitted: unknown[][] = [];
    filter.catch(new DbError("duplicate key"), wsHost(emitted));
    filter.catch(new WsException("bad order"), wsHost(emitted));
    filter.catch(new WsException({ code: "E1" }), wsHost(emitted));
    filter.catch(new DbError("duplicate key"), wsHost(emitted, true));
    const cause = { pattern: "orders.create", data: { n: 1 } };
    assert.deepEqual(emitted, [
      ["exception", { ...INTERNAL, cause }],
      ["exception", { status: "error", message: "bad order", cause }],
      ["exception", { code: "E1" }],
      ["send", { event: "exception", data: { ...INTERNAL, cause } }],
    ]);
  });

  it("a GraphQL resolver's exception, through Nest's external context (as @nestjs/graphql calls it), rejects as without the module: never a resolved Observable", async () => {
    @Injectable()
    class Resolver {
      user(): never {
        throw new BadRequestException("bad id");
      }
    }
    for (const register of [false, true]) {
      @Module({ imports: register ? [SafeResponseModule.register()] : [], providers: [Resolver] })
      class GraphqlModule {}
      const app = await NestFactory.create(GraphqlModule, { logger: false });
      try {
        await app.init();
        const resolver = app.get(Resolver);
        // What @nestjs/graphql's ResolversExplorerService does for a @Query().
        const resolve = app.get(ExternalContextCreator).create(
          resolver,
          resolver.user,
          "user",
          "graphql:args",
          { exchangeKeyForValue: () => undefined } as never,
          undefined,
          undefined,
          undefined,
          "graphql",
        );
        await assert.rejects(
          Promise.resolve(resolve({}, {}, {}, {})),
          (error) => error instanceof BadRequestException && error.message === "bad id",
          `with the module: ${register}`,
        );
      } finally {
        await app.close();
      }
    }
  });

  it("rethrows other contexts' exceptions untouched, as Nest's external filter does: thrown, not returned (a resolver's value would be an Observable, its error lost)", () => {
    const [filter] = filterLogging();
    const failure = new Error("graphql failure");
    const host = { getType: () => "graphql" } as never;
    assert.throws(() => filter.catch(failure, host), (error) => error === failure);
  });
});
