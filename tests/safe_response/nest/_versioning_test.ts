/**
 * Nest versioning: the route's version read from `@Version` (else the
 * controller's, else `defaultVersion`), the one a request names, and a
 * `version` function given Nest's execution context, on Express and Fastify.
 */
import "reflect-metadata";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  type CanActivate,
  Controller,
  type ExecutionContext,
  Get,
  Injectable,
  Module,
  NotFoundException,
  UseGuards,
  Version,
  VERSION_NEUTRAL,
  VersioningType,
} from "@nestjs/common";
import type { HttpExchange } from "../../../safe_response/mod.ts";
import { readRouteVersion, requestVersion } from "../../../safe_response/nest/_versioning.ts";
import { SafeResponseModule } from "../../../safe_response/nest/safe_response.module.ts";
import { ADAPTERS, boot, getJson, type RunningApp } from "./helpers.ts";

const exchange = (target: string, headers: Record<string, string> = {}): HttpExchange => ({
  method: "GET",
  target,
  requestHeader: (name) => headers[name.toLowerCase()],
  responseHeader: () => undefined,
  request: { target },
});

describe("route versions", () => {
  it("read @Version of the handler, else the controller's, else defaultVersion; neutral is none", () => {
    @Controller({ path: "r", version: "9" })
    class Routes {
      @Version(["3", "4"])
      many() {}
      @Version(VERSION_NEUTRAL)
      neutral() {}
      plain() {}
    }
    const uri = { type: VersioningType.URI, defaultVersion: "1" } as const;
    assert.deepEqual(readRouteVersion(Routes, Routes.prototype.many, uri), ["3", "4"]);
    assert.equal(readRouteVersion(Routes, Routes.prototype.neutral, uri), undefined);
    assert.equal(readRouteVersion(Routes, Routes.prototype.plain, uri), "9");
    class Bare {
      plain() {}
    }
    assert.equal(readRouteVersion(Bare, Bare.prototype.plain, uri), "1");
    assert.equal(readRouteVersion(Routes, Routes.prototype.many, undefined), undefined);
  });

  it("pick the one the request names, by URI, header, media type or extractor", () => {
    const versions = ["3", "4"];
    assert.equal(
      requestVersion(versions, exchange("/v4/r?x=v3"), { type: VersioningType.URI }),
      "4",
    );
    assert.equal(
      requestVersion(versions, exchange("/api-3/r"), { type: VersioningType.URI, prefix: "api-" }),
      "3",
    );
    const header = { type: VersioningType.HEADER, header: "X-V" } as const;
    assert.equal(requestVersion(versions, exchange("/r", { "x-v": " 3 " }), header), "3");
    assert.equal(requestVersion(versions, exchange("/r", { "x-v": "5" }), header), undefined);
    const media = { type: VersioningType.MEDIA_TYPE, key: "v=" } as const;
    assert.equal(
      requestVersion(versions, exchange("/r", { accept: "application/json;v=4" }), media),
      "4",
    );
    // As Nest 12 reads it: ranges and parameters split outside quoted strings, the type itself
    // skipped, the first `key` parameter taken (unquoted), whether or not the route lists it.
    const reads = (accept: string) => requestVersion(versions, exchange("/r", { accept }), media);
    assert.equal(reads('application/json;v="4"'), "4");
    assert.equal(reads('application/json;x="a;v=3;b";v=4'), "4");
    assert.equal(reads("application/json;v=5, text/plain;v=4"), undefined);
    assert.equal(reads("v=3/json;x=1"), undefined);
    assert.equal(reads('application/json;v="\\4"'), "4");
    const custom = (extractor: (request: unknown) => string | string[]) =>
      ({ type: VersioningType.CUSTOM, extractor }) as const;
    assert.equal(requestVersion(versions, exchange("/r"), custom(() => ["5", "3"])), "3");
    const throwing = custom(() => {
      throw new Error("bad request");
    });
    assert.equal(requestVersion(versions, exchange("/r"), throwing), undefined);
  });
});

@Injectable()
class DenyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    if (context.switchToHttp().getRequest().headers["x-deny"]) throw new NotFoundException();
    return true;
  }
}

@Controller("v")
@UseGuards(DenyGuard)
class VersionedController {
  @Get("ok")
  ok() {
    return "ok";
  }

  @Get("fail")
  fail() {
    throw new NotFoundException("Nothing here");
  }

  @Get("two")
  @Version("2")
  two() {
    return 2;
  }

  @Get("many")
  @Version(["3", "4"])
  many() {
    return 34;
  }

  @Get("neutral")
  @Version(VERSION_NEUTRAL)
  neutral() {
    return "n";
  }
}

const quiet = { timestamp: false, path: false } as const;

@Module({
  imports: [
    SafeResponseModule.register({
      ...quiet,
      problemDetails: true,
      version: (context) => {
        const header = context.switchToHttp().getRequest().headers["x-api-version"];
        if (header === "boom") throw new Error("bad header");
        return header;
      },
    }),
  ],
  controllers: [VersionedController],
})
class FunctionModule {}

@Module({
  imports: [SafeResponseModule.register({ ...quiet, version: "fallback" })],
  controllers: [VersionedController],
})
class NestVersioningModule {}

const versionOf = (body: Record<string, unknown>) =>
  (body.meta as { apiVersion?: string } | undefined)?.apiVersion;

for (const adapter of ADAPTERS) {
  describe(`api version, function (${adapter})`, () => {
    let app: RunningApp;
    before(async () => app = await boot(FunctionModule, adapter));
    after(() => app.close());

    it("is computed from the execution context, guard errors and problem details included", async () => {
      const headers = { "x-api-version": "7" };
      assert.equal(versionOf((await getJson(app.url, "/v/ok", { headers })).body), "7");
      const fail = await getJson(app.url, "/v/fail", { headers });
      assert.equal(fail.body.status, 404);
      assert.equal(versionOf(fail.body), "7");
      const denied = await getJson(app.url, "/v/ok", { headers: { ...headers, "x-deny": "1" } });
      assert.equal(versionOf(denied.body), "7");
      const { body } = await getJson(app.url, "/v/ok");
      assert.equal(body.meta, undefined);
      const boom = await getJson(app.url, "/v/ok", { headers: { "x-api-version": "boom" } });
      assert.equal(boom.status, 200);
      assert.equal(boom.body.meta, undefined);
    });
  });

  describe(`api version, Nest URI versioning (${adapter})`, () => {
    let app: RunningApp;
    before(async () =>
      app = await boot(NestVersioningModule, adapter, {
        before: (nest) => nest.enableVersioning({ type: VersioningType.URI, defaultVersion: "1" }),
      })
    );
    after(() => app.close());

    it("defaults to the route's version", async () => {
      assert.equal(versionOf((await getJson(app.url, "/v1/v/ok")).body), "1");
      assert.equal(versionOf((await getJson(app.url, "/v1/v/fail")).body), "1");
      assert.equal(versionOf((await getJson(app.url, "/v2/v/two")).body), "2");
      assert.equal(versionOf((await getJson(app.url, "/v3/v/many")).body), "3");
      assert.equal(versionOf((await getJson(app.url, "/v4/v/many")).body), "4");
      assert.equal(versionOf((await getJson(app.url, "/v/neutral")).body), "fallback");
    });
  });

  describe(`api version, Nest header versioning (${adapter})`, () => {
    let app: RunningApp;
    before(async () =>
      app = await boot(NestVersioningModule, adapter, {
        before: (nest) => nest.enableVersioning({ type: VersioningType.HEADER, header: "X-V" }),
      })
    );
    after(() => app.close());

    it("picks the version the request names", async () => {
      const many = await getJson(app.url, "/v/many", { headers: { "x-v": "4" } });
      assert.equal(versionOf(many.body), "4");
      const ok = await getJson(app.url, "/v/ok");
      assert.equal(versionOf(ok.body), "fallback"); // unversioned route, no defaultVersion
    });
  });
}
