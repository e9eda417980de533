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
import { SafeResponseModule } from "../../../safe_response/nest/mod.ts";
import { ADAPTERS, boot, getJson, type RunningApp } from "./helpers.ts";

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
  imports: [SafeResponseModule.register({ ...quiet, version: "2024-06-01" })],
  controllers: [VersionedController],
})
class StringModule {}

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
  describe(`api version, string (${adapter})`, () => {
    let app: RunningApp;
    before(async () => app = await boot(StringModule, adapter));
    after(() => app.close());

    it("is in successes, handler errors and guard errors", async () => {
      const ok = await getJson(app.url, "/v/ok");
      assert.deepEqual(ok.body, {
        success: true,
        statusCode: 200,
        data: "ok",
        meta: { apiVersion: "2024-06-01" },
      });
      const fail = await getJson(app.url, "/v/fail");
      assert.equal(fail.status, 404);
      assert.equal(versionOf(fail.body), "2024-06-01");
      const denied = await getJson(app.url, "/v/ok", { headers: { "x-deny": "1" } });
      assert.equal(denied.status, 404);
      assert.equal(versionOf(denied.body), "2024-06-01");
      const unknown = await getJson(app.url, "/nowhere");
      assert.equal(versionOf(unknown.body), "2024-06-01");
    });
  });

  describe(`api version, function (${adapter})`, () => {
    let app: RunningApp;
    before(async () => app = await boot(FunctionModule, adapter));
    after(() => app.close());

    it("is computed from the execution context, problem details included", async () => {
      const headers = { "x-api-version": "7" };
      assert.equal(versionOf((await getJson(app.url, "/v/ok", { headers })).body), "7");
      const fail = await getJson(app.url, "/v/fail", { headers });
      assert.equal(fail.body.status, 404);
      assert.equal(versionOf(fail.body), "7");
      const denied = await getJson(app.url, "/v/ok", { headers: { ...headers, "x-deny": "1" } });
      assert.equal(versionOf(denied.body), "7");
    });

    it("is left out when the function returns nothing or throws", async () => {
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

describe("version option", () => {
  it("is validated at registration", () => {
    assert.throws(() => SafeResponseModule.register({ version: "" }), /`version`/);
    assert.throws(() => SafeResponseModule.register({ version: 2 as never }), /`version`/);
  });
});
