import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  BadRequestException,
  Controller,
  Get,
  Module,
  UnauthorizedException,
  UseGuards,
} from "@nestjs/common";
import { Deprecated, SafeResponseModule } from "../../../safe_response/nest/mod.ts";
import { ADAPTERS, boot, getJson, headerDenyGuard } from "./helpers.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const TokenGuard = headerDenyGuard(() => new UnauthorizedException());

@Controller("t")
@UseGuards(TokenGuard)
class TrackingController {
  @Get()
  ok() {
    return "ok";
  }

  @Get("fail")
  fail() {
    throw new BadRequestException("nope");
  }

  @Get("deprecated")
  @Deprecated({
    since: "2026-01-01T00:00:00Z",
    sunset: new Date("2027-01-01T00:00:00Z"),
    message: "Use /v2/t",
    link: "https://example.com/docs/v2",
  })
  deprecated() {
    return "old";
  }

  @Get("deprecated-fail")
  @Deprecated({ sunset: "2027-06-30T12:00:00Z" })
  deprecatedFail() {
    throw new BadRequestException("old and broken");
  }
}

@Deprecated()
@Controller("legacy")
class LegacyController {
  @Get()
  legacy() {
    return "legacy";
  }
}

@Module({
  imports: [SafeResponseModule.register({ requestId: true, responseTime: true })],
  controllers: [TrackingController, LegacyController],
})
class TrackingModule {}

let counter = 0;

@Module({
  imports: [
    SafeResponseModule.register({
      requestId: { headerName: "X-Correlation-Id", generator: () => `gen-${++counter}` },
    }),
  ],
  controllers: [TrackingController],
})
class CustomIdModule {}

for (const adapter of ADAPTERS) {
  describe(`request ids and response time (${adapter})`, () => {
    it("reuses safe incoming ids and echoes them in header and body", async () => {
      const { url, close } = await boot(TrackingModule, adapter);
      try {
        const id = "req-42_ABC.def:~!";
        for (const path of ["/t", "/t/fail", "/no/route"]) {
          const { headers, body } = await getJson(url, path, { headers: { "x-request-id": id } });
          assert.equal(headers.get("x-request-id"), id, path);
          assert.equal(body.requestId, id, path);
        }
        const guarded = await getJson(url, "/t", {
          headers: { "x-request-id": id, "x-deny": "1" },
        });
        assert.equal(guarded.status, 401);
        assert.equal(guarded.body.requestId, id);
        assert.equal(guarded.headers.get("x-request-id"), id);
        const longest = "a".repeat(128);
        assert.equal(
          (await getJson(url, "/t", { headers: { "x-request-id": longest } })).body.requestId,
          longest,
        );
      } finally {
        await close();
      }
    });

    it("replaces unsafe or missing ids with a generated UUID", async () => {
      const { url, close } = await boot(TrackingModule, adapter);
      try {
        for (const unsafe of ["a".repeat(129), "has space", "tab\there", ""]) {
          const { headers, body } = await getJson(url, "/t", {
            headers: { "x-request-id": unsafe },
          });
          assert.match(body.requestId as string, UUID, JSON.stringify(unsafe));
          assert.equal(headers.get("x-request-id"), body.requestId);
        }
        const first = await getJson(url, "/t");
        const second = await getJson(url, "/t");
        assert.match(first.body.requestId as string, UUID);
        assert.notEqual(first.body.requestId, second.body.requestId);
      } finally {
        await close();
      }
    });

    it("uses a custom header name and generator", async () => {
      const { url, close } = await boot(CustomIdModule, adapter);
      try {
        const generated = await getJson(url, "/t");
        assert.match(generated.body.requestId as string, /^gen-\d+$/);
        assert.equal(generated.headers.get("x-correlation-id"), generated.body.requestId);
        assert.equal(generated.headers.get("x-request-id"), null);
        const reused = await getJson(url, "/t/fail", { headers: { "x-correlation-id": "corr-1" } });
        assert.equal(reused.body.requestId, "corr-1");
      } finally {
        await close();
      }
    });

    it("measures responseTime on successes and handler errors, not on guard errors", async () => {
      const { url, close } = await boot(TrackingModule, adapter);
      try {
        const ok = (await getJson(url, "/t")).body.meta as { responseTime: number };
        assert.equal(typeof ok.responseTime, "number");
        assert.ok(ok.responseTime >= 0 && ok.responseTime < 5000);
        const failed = (await getJson(url, "/t/fail")).body.meta as { responseTime: number };
        assert.equal(typeof failed.responseTime, "number");
        const guarded = await getJson(url, "/t/fail", { headers: { "x-deny": "1" } });
        assert.equal(guarded.body.meta, undefined);
      } finally {
        await close();
      }
    });
  });

  describe(`deprecation (${adapter})`, () => {
    it("sends exact Deprecation, Sunset and Link headers and meta.deprecation", async () => {
      const { url, close } = await boot(TrackingModule, adapter);
      try {
        const { headers, body } = await getJson(url, "/t/deprecated");
        assert.equal(headers.get("deprecation"), "@1767225600");
        assert.equal(headers.get("sunset"), "Fri, 01 Jan 2027 00:00:00 GMT");
        assert.equal(headers.get("link"), '<https://example.com/docs/v2>; rel="deprecation"');
        assert.deepEqual((body.meta as Record<string, unknown>).deprecation, {
          deprecated: true,
          since: "2026-01-01T00:00:00.000Z",
          sunset: "2027-01-01T00:00:00.000Z",
          message: "Use /v2/t",
          link: "https://example.com/docs/v2",
        });
        const plain = await getJson(url, "/t");
        assert.equal(plain.headers.get("deprecation"), null);
        assert.equal((plain.body.meta as Record<string, unknown>).deprecation, undefined);
        const legacy = await getJson(url, "/legacy");
        assert.equal(legacy.headers.get("deprecation"), "@0", "without since: the epoch");
        assert.equal(legacy.headers.get("sunset"), null);
        assert.deepEqual((legacy.body.meta as Record<string, unknown>).deprecation, {
          deprecated: true,
        });
      } finally {
        await close();
      }
    });

    it("marks errors thrown by the handler, not errors thrown by guards", async () => {
      const { url, close } = await boot(TrackingModule, adapter);
      try {
        const failed = await getJson(url, "/t/deprecated-fail");
        assert.equal(failed.status, 400);
        assert.equal(failed.headers.get("deprecation"), "@0");
        assert.equal(failed.headers.get("sunset"), "Wed, 30 Jun 2027 12:00:00 GMT");
        assert.deepEqual((failed.body.meta as Record<string, unknown>).deprecation, {
          deprecated: true,
          sunset: "2027-06-30T12:00:00.000Z",
        });
        const guarded = await getJson(url, "/t/deprecated-fail", { headers: { "x-deny": "1" } });
        assert.equal(guarded.status, 401);
        assert.equal(guarded.headers.get("deprecation"), null);
        assert.equal(guarded.headers.get("sunset"), null);
        assert.equal(guarded.body.meta, undefined);
      } finally {
        await close();
      }
    });
  });
}
