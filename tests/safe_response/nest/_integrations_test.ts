import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  Controller,
  ForbiddenException,
  Get,
  Module,
  NotFoundException,
  UseGuards,
} from "@nestjs/common";
import { ClsModule } from "nestjs-cls";
import { Paginated, SafeResponseModule } from "../../../safe_response/nest/mod.ts";
import { ADAPTERS, boot, CapturingLogger, getJson, headerDenyGuard } from "./helpers.ts";

const DenyGuard = headerDenyGuard(() => new ForbiddenException());

@Controller("ctx")
@UseGuards(DenyGuard)
class ContextController {
  @Get()
  get() {
    return "with context";
  }

  @Get("missing")
  missing() {
    throw new NotFoundException();
  }

  @Get("page")
  @Paginated()
  page() {
    return { data: [], total: 0, page: 1, limit: 5 };
  }
}

@Module({
  imports: [
    ClsModule.forRoot({
      global: true,
      middleware: {
        mount: true,
        setup: (cls, request: { headers: Record<string, string> }) => {
          cls.set("traceId", request.headers["x-trace-id"]);
          cls.set("tenantId", "tenant-7");
        },
      },
    }),
    SafeResponseModule.register({
      context: {
        fields: { traceId: "traceId", pagination: "tenantId" },
        resolver: (store) => ({ tenant: store.tenantId, absent: undefined }),
      },
    }),
  ],
  controllers: [ContextController],
})
class ClsAppModule {}

@Module({
  imports: [SafeResponseModule.register({ context: { fields: { traceId: "traceId" } } })],
  controllers: [ContextController],
})
class NoClsModule {}

for (const adapter of ADAPTERS) {
  describe(`request context through nestjs-cls (${adapter})`, () => {
    it("copies store values into meta on successes and errors, guard errors included", async () => {
      const { url, close } = await boot(ClsAppModule, adapter);
      try {
        const headers = { "x-trace-id": "trace-123" };
        const ok = await getJson(url, "/ctx", { headers });
        assert.deepEqual(ok.body.meta, {
          traceId: "trace-123",
          pagination: "tenant-7",
          tenant: "tenant-7",
        });
        const missing = await getJson(url, "/ctx/missing", { headers });
        assert.deepEqual(missing.body.meta, {
          traceId: "trace-123",
          pagination: "tenant-7",
          tenant: "tenant-7",
        });
        const guarded = await getJson(url, "/ctx", { headers: { ...headers, "x-deny": "1" } });
        assert.equal(guarded.status, 403);
        assert.equal((guarded.body.meta as Record<string, unknown>).traceId, "trace-123");
        const page = await getJson(url, "/ctx/page", { headers });
        const meta = page.body.meta as Record<string, unknown>;
        assert.equal(
          (meta.pagination as { type: string }).type,
          "offset",
          "context never overrides meta",
        );
        assert.equal(meta.traceId, "trace-123");
      } finally {
        await close();
      }
    });

    it("warns and stays off without nestjs-cls in the application", async () => {
      const logger = new CapturingLogger();
      const { url, close } = await boot(NoClsModule, adapter, { logger });
      try {
        assert.equal(logger.find("warn", "no nestjs-cls ClsService found").length, 1);
        assert.equal((await getJson(url, "/ctx")).body.meta, undefined);
      } finally {
        await close();
      }
    });
  });
}
