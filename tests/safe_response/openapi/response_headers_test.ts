/**
 * `applyGlobalErrors` documents the response headers the server sends: the request id (module
 * option `requestId`) on every response, `Deprecation`, `Sunset` and `Link` on a `Deprecated`
 * route's, and the pagination `Link` on a paginated route's success (`linkHeader`, the route's:
 * the method's, else its controller's; else the module's). A guard's error (a 401, 403 or 429)
 * carries no `Deprecation`, `Sunset` or `Link`: documented all the same (optional), since a handler's
 * error of those statuses carries them. Checked against real responses, on Express and Fastify.
 */
import "reflect-metadata";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  type CanActivate,
  Controller,
  type ExecutionContext,
  ForbiddenException,
  Get,
  Injectable,
  Module,
  Query,
  UnauthorizedException,
  UseGuards,
} from "@nestjs/common";
import { DocumentBuilder, SwaggerModule } from "@nestjs/swagger";
import { ThrottlerGuard, ThrottlerModule } from "@nestjs/throttler";
import SwaggerParser from "@apidevtools/swagger-parser";
import {
  CursorPaginated,
  Deprecated,
  Paginated,
  SafeResponse,
  SafeResponseModule,
  type SafeResponseModuleOptions,
} from "../../../safe_response/nest/mod.ts";
import { applyGlobalErrors } from "../../../safe_response/openapi/mod.ts";
import { ApiKeysService, InMemoryApiKeyStorage } from "../../../api_keys/mod.ts";
import {
  ApiKeysGuard,
  ApiKeysModule,
  type ApiKeysModuleOptions,
} from "../../../api_keys/nest/mod.ts";
import { apiKeyThrottlerTracker } from "../../../rate_limits/throttler.ts";
import { createRateLimiter } from "../../../rate_limits/limiter.ts";
import { ADAPTERS, boot } from "../nest/helpers.ts";
import { documentedResponse, type Json } from "./openapi_validation.ts";

/** Denies with the status `x-deny` names (401 or 403), as an auth guard would. */
@Injectable()
class DenyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const deny = context.switchToHttp().getRequest().headers["x-deny"];
    if (deny === "401") throw new UnauthorizedException();
    if (deny === "403") throw new ForbiddenException();
    return true;
  }
}

@Controller("h")
@UseGuards(DenyGuard)
class HeadersController {
  @Get("plain")
  @SafeResponse()
  plain() {
    return 1;
  }

  @Get("old")
  @SafeResponse()
  @Deprecated({ since: "2025-01-01", sunset: "2027-01-01", link: "https://example.com/v2" })
  old(@Query("fail") fail?: string) {
    if (fail !== undefined) throw new Error("handler failure");
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

/** `linkHeader` on the controller, the other pagination options on the method. */
@Controller("feed")
@CursorPaginated({ linkHeader: true })
class FeedController {
  @Get()
  @CursorPaginated({ maxLimit: 5 })
  list() {
    return { data: [1], nextCursor: "abc", hasMore: true, limit: 1 };
  }
}

/** The requests checked: every route's success, a guard's 401 and 403, a handler's 500. */
const REQUESTS: ReadonlyArray<[string, Record<string, string>]> = [
  ["/h/plain", {}],
  ["/h/old", {}],
  ["/h/pages", {}],
  ["/h/module-pages", {}],
  ["/feed", {}],
  ["/h/old", { "x-deny": "401" }],
  ["/h/old", { "x-deny": "403" }],
  ["/h/plain", { "x-deny": "401" }],
  ["/h/old?fail=1", {}],
];

const HEADERS = ["x-request-id", "deprecation", "sunset", "link"];

function app(options: SafeResponseModuleOptions) {
  @Module({
    imports: [SafeResponseModule.register(options)],
    controllers: [HeadersController, FeedController],
    providers: [DenyGuard],
  })
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
          swagger: { globalErrors: [401, 403, 500] },
        };
        const running = await boot(app(options), adapter);
        try {
          const document: Json = applyGlobalErrors(
            SwaggerModule.createDocument(running.app, new DocumentBuilder().build()),
            options,
          );
          const statuses: number[] = [];
          for (const [path, headers] of REQUESTS) {
            const response = await fetch(running.url + path, { headers });
            await response.body?.cancel();
            statuses.push(response.status);
            const template = path.split("?")[0];
            const documented = documentedResponse(document, template, "get", response.status);
            const names = Object.keys(documented.headers ?? {}).map((name) => name.toLowerCase());
            const sent = HEADERS.filter((name) => response.headers.has(name));
            // A guard's refusal of a deprecated route: its headers documented, optional, not sent.
            const optional = [
              ...(path === "/h/old" && headers["x-deny"] !== undefined
                ? ["deprecation", "link", "sunset"]
                : []),
              // Documented on every 401 (an API key guard's challenge); this guard sends none.
              ...(response.status === 401 ? ["www-authenticate"] : []),
            ];
            assert.deepEqual(
              names.sort(),
              [...sent, ...optional].sort(),
              `${path} ${JSON.stringify(headers)}`,
            );
          }
          assert.deepEqual(statuses, [200, 200, 200, 200, 200, 401, 403, 401, 500]);
          assert.ok(document.paths["/feed"].get.responses[200].headers.Link, "the class's Link");
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

/** `ApiKeysModule` over an empty in-memory storage, with `extra` options. */
function apiKeysModule(extra: Partial<ApiKeysModuleOptions> = {}) {
  return ApiKeysModule.forRoot({
    peppers: { 1: "a-pepper-of-at-least-thirty-two-bytes!!" },
    storage: new InMemoryApiKeyStorage(),
    ...extra,
  });
}

/** A route behind `ApiKeysGuard` and `ThrottlerGuard` (2 requests a minute). */
@Controller("limited")
@UseGuards(ApiKeysGuard, ThrottlerGuard)
class LimitedController {
  @Get()
  @SafeResponse()
  list() {
    return 1;
  }
}

describe("applyGlobalErrors: authentication and rate-limit headers", () => {
  for (const standard of [false, true]) {
    it(`documents WWW-Authenticate on a 401, Retry-After on a 429, the rate-limit headers on a success (standard: ${standard})`, async () => {
      const options: SafeResponseModuleOptions = {
        requestId: true,
        rateLimit: { standard },
        swagger: { globalErrors: [401, 429] },
      };
      @Module({
        imports: [
          SafeResponseModule.register(options),
          apiKeysModule(),
          ThrottlerModule.forRoot({
            throttlers: [{ ttl: 60_000, limit: 2 }],
            getTracker: apiKeyThrottlerTracker,
          }),
        ],
        controllers: [LimitedController],
      })
      class LimitedModule {}
      const running = await boot(LimitedModule, "express");
      try {
        const { key } = await running.app.get(ApiKeysService).create({
          tenantId: "t",
          name: "k",
          scopes: [{ resource: "orders", level: "read" }],
        });
        const document: Json = applyGlobalErrors(
          SwaggerModule.createDocument(running.app, new DocumentBuilder().build()),
          options,
        );
        const responses = document.paths["/limited"].get.responses;
        const names = (status: number) => Object.keys(responses[status].headers).sort();
        const limits = ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"];
        assert.deepEqual(names(200), [
          ...(standard ? ["RateLimit", "RateLimit-Policy"] : []),
          ...limits,
          "X-Request-Id",
        ]);
        assert.deepEqual(names(401), ["WWW-Authenticate", "X-Request-Id"]);
        assert.deepEqual(names(429), [
          "RateLimit",
          "RateLimit-Policy",
          "Retry-After",
          ...limits, // ApiKeysGuard's `xRateLimitHeaders` sends them with its denial
          "X-Request-Id",
        ]);
        const statuses: number[] = [];
        const keyed = { "x-api-key": key };
        const checked = ["www-authenticate", "retry-after", ...limits.map((l) => l.toLowerCase())];
        for (const headers of [{}, keyed, keyed, keyed] as Record<string, string>[]) {
          const response = await fetch(`${running.url}/limited`, { headers });
          await response.body?.cancel();
          statuses.push(response.status);
          const documented = names(response.status).map((name) => name.toLowerCase());
          for (const name of checked) {
            if (response.headers.has(name)) {
              assert.ok(documented.includes(name), `${response.status} documents ${name}`);
            }
          }
        }
        assert.deepEqual(statuses, [401, 200, 200, 429]);
        await SwaggerParser.validate(structuredClone(document));
        const once = structuredClone(document);
        assert.deepEqual(applyGlobalErrors(document, options), once);
      } finally {
        await running.close();
      }
    });
  }

  it("documents the RateLimit, RateLimit-Policy and X-RateLimit-* fields of an API key guard's 429", async () => {
    const options: SafeResponseModuleOptions = {
      rateLimit: true,
      swagger: { globalErrors: [429] },
    };
    @Controller("keyed")
    @UseGuards(ApiKeysGuard)
    class KeyedController {
      @Get()
      @SafeResponse()
      list() {
        return 1;
      }
    }
    @Module({
      imports: [
        SafeResponseModule.register(options),
        apiKeysModule({
          limiter: createRateLimiter({ logger: () => {} }),
          xRateLimitHeaders: true,
        }),
      ],
      controllers: [KeyedController],
    })
    class KeyedModule {}
    for (const adapter of ADAPTERS) {
      const running = await boot(KeyedModule, adapter);
      try {
        const { key } = await running.app.get(ApiKeysService).create({
          tenantId: "t",
          name: "k",
          scopes: [{ resource: "orders", level: "read" }],
          rateLimits: [{ name: "burst", limit: 1, windowMs: 60_000 }],
        });
        const document: Json = applyGlobalErrors(
          SwaggerModule.createDocument(running.app, new DocumentBuilder().build()),
          options,
        );
        const documented = Object.keys(document.paths["/keyed"].get.responses[429].headers)
          .map((name) => name.toLowerCase());
        const statuses: number[] = [];
        for (let i = 0; i < 2; i++) {
          const response = await fetch(`${running.url}/keyed`, { headers: { "x-api-key": key } });
          await response.body?.cancel();
          statuses.push(response.status);
          if (response.status !== 429) continue;
          for (
            const name of [
              "ratelimit",
              "ratelimit-policy",
              "retry-after",
              "x-ratelimit-limit",
              "x-ratelimit-remaining",
              "x-ratelimit-reset",
            ]
          ) {
            assert.ok(response.headers.has(name), `${adapter}: the 429 carries ${name}`);
            assert.ok(documented.includes(name), `${adapter}: the 429 documents ${name}`);
          }
        }
        assert.deepEqual(statuses, [200, 429], adapter);
      } finally {
        await running.close();
      }
    }
  });
});
