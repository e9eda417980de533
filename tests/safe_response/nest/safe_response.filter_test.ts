import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  Body,
  Controller,
  ForbiddenException,
  Get,
  Module,
  NotFoundException,
  Post,
  UseGuards,
  ValidationPipe,
} from "@nestjs/common";
import { IsString } from "class-validator";
import { Deprecated, ProblemType, SafeResponseModule } from "../../../safe_response/nest/mod.ts";
import { ADAPTERS, boot, getJson, headerDenyGuard } from "./helpers.ts";

const HeaderGuard = headerDenyGuard(() => new ForbiddenException("Denied by guard"));

class NameDto {
  @IsString()
  name!: string;
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
  @Deprecated({ since: "2026-01-01T00:00:00Z" })
  typed() {
    throw new NotFoundException("Payment item missing");
  }

  @Post("validate")
  validate(@Body(new ValidationPipe({ expectedType: NameDto })) body: NameDto) {
    return body;
  }
}

@Module({
  imports: [
    SafeResponseModule.register({ problemDetails: true, requestId: true, responseTime: true }),
  ],
  controllers: [ProblemController],
})
class PlainProblemModule {}

@Module({
  imports: [
    SafeResponseModule.register({
      problemDetails: { baseUrl: "https://api.example.com/problems/" },
    }),
  ],
  controllers: [ProblemController],
})
class BaseUrlProblemModule {}

const mediaType = (headers: Headers) => headers.get("content-type")?.split(";")[0];

for (const adapter of ADAPTERS) {
  describe(`problem details (${adapter})`, () => {
    it("sends RFC 9457 bodies as application/problem+json with about:blank by default", async () => {
      const { url, close } = await boot(PlainProblemModule, adapter);
      try {
        const { status, headers, body } = await getJson(url, "/p/missing?x=1");
        assert.equal(status, 404);
        assert.equal(mediaType(headers), "application/problem+json");
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
      } finally {
        await close();
      }
    });

    it("uses the route's ProblemType, and details for validation errors", async () => {
      const { url, close } = await boot(PlainProblemModule, adapter);
      try {
        const typed = await getJson(url, "/p/typed");
        assert.equal(typed.body.type, "https://errors.example.com/payment-required");
        assert.equal(typed.body.detail, "Payment item missing");
        const invalid = await getJson(url, "/p/validate", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: "{}",
        });
        assert.equal(invalid.status, 400);
        assert.equal(invalid.body.detail, "Validation failed");
        assert.deepEqual(invalid.body.details, ["name must be a string"]);
        assert.equal(invalid.body.title, "Bad Request");
      } finally {
        await close();
      }
    });

    it("derives the type from baseUrl", async () => {
      const { url, close } = await boot(BaseUrlProblemModule, adapter);
      try {
        const { body, headers } = await getJson(url, "/p/missing");
        assert.equal(mediaType(headers), "application/problem+json");
        assert.equal(body.type, "https://api.example.com/problems/not-found");
        const typed = await getJson(url, "/p/typed");
        assert.equal(typed.body.type, "https://errors.example.com/payment-required");
      } finally {
        await close();
      }
    });

    it("omits responseTime, deprecation and the route's problem type on guard-thrown errors (rule 3)", async () => {
      const { url, close } = await boot(PlainProblemModule, adapter);
      try {
        const handler = await getJson(url, "/p/typed");
        assert.equal(handler.headers.get("deprecation"), "@1767225600");
        assert.equal(
          (handler.body.meta as Record<string, unknown>).deprecation !== undefined,
          true,
        );
        const guarded = await getJson(url, "/p/typed", { headers: { "x-deny": "1" } });
        assert.equal(guarded.status, 403);
        assert.equal(guarded.body.type, "about:blank");
        assert.equal(guarded.body.detail, "Denied by guard");
        assert.equal(guarded.body.meta, undefined);
        assert.equal(guarded.headers.get("deprecation"), null);
        assert.equal(
          typeof guarded.body.requestId,
          "string",
          "request ids are assigned before guards",
        );
        assert.equal(guarded.body.requestId, guarded.headers.get("x-request-id"));
      } finally {
        await close();
      }
    });
  });
}
