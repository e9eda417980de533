import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  type CanActivate,
  Controller,
  type ExecutionContext,
  Get,
  Injectable,
  Module,
  UseGuards,
} from "@nestjs/common";
import { defineErrors, SafeException } from "../../../safe_response/mod.ts";
import { DocumentBuilder, SwaggerModule } from "@nestjs/swagger";
import { SafeResponseModule } from "../../../safe_response/nest/mod.ts";
import { ApiSafeCatalogErrors } from "../../../safe_response/openapi/mod.ts";
import { ADAPTERS, boot, CapturingLogger, getJson, type RunningApp } from "./helpers.ts";

const Errors = defineErrors({
  USER_NOT_FOUND: { status: 404, message: "User not found" },
  EMAIL_TAKEN: { status: 409, message: "Email already registered", details: { field: "email" } },
  KEY_REVOKED: { status: 401, message: "Key revoked" },
});

@Injectable()
class RevokedGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    if (context.switchToHttp().getRequest().headers["x-revoked"]) {
      throw Errors.exception("KEY_REVOKED");
    }
    return true;
  }
}

@Controller("c")
@UseGuards(RevokedGuard)
class CatalogController {
  @Get("missing-user")
  @ApiSafeCatalogErrors(Errors, ["USER_NOT_FOUND", "KEY_REVOKED"])
  missingUser() {
    throw new SafeException("USER_NOT_FOUND");
  }

  @Get("taken")
  @ApiSafeCatalogErrors(Errors, ["EMAIL_TAKEN"], { problemDetails: true })
  taken() {
    throw Errors.exception("EMAIL_TAKEN", { message: "a@b.c is taken" });
  }

  @Get("taken-details")
  takenDetails() {
    throw new SafeException("EMAIL_TAKEN", { details: { field: "alias" } });
  }

  @Get("ghost")
  ghost() {
    throw new SafeException("GHOST_KEY");
  }

  @Get("ok")
  ok() {
    return "ok";
  }
}

const base = { errorCatalog: Errors, timestamp: false, path: false } as const;

@Module({
  imports: [SafeResponseModule.register(base)],
  controllers: [CatalogController],
})
class EnvelopeModule {}

@Module({
  imports: [
    SafeResponseModule.register({
      ...base,
      problemDetails: { baseUrl: "https://api.example.com/problems" },
      errorCodeMapper: (_exception, { defaultCode }) =>
        defaultCode === "EMAIL_TAKEN" ? "EMAIL_CONFLICT" : undefined,
    }),
  ],
  controllers: [CatalogController],
})
class ProblemModule {}

for (const adapter of ADAPTERS) {
  describe(`error catalog, envelope (${adapter})`, () => {
    let app: RunningApp;
    const logger = new CapturingLogger();
    before(async () => app = await boot(EnvelopeModule, adapter, { logger }));
    after(() => app.close());

    it("throws by key: catalog status and message, code = key", async () => {
      const { status, body } = await getJson(app.url, "/c/missing-user");
      assert.equal(status, 404);
      assert.deepEqual(body, {
        success: false,
        statusCode: 404,
        error: { code: "USER_NOT_FOUND", message: "User not found" },
      });
    });

    it("applies per-throw overrides", async () => {
      const taken = await getJson(app.url, "/c/taken");
      assert.equal(taken.status, 409);
      assert.deepEqual(taken.body.error, {
        code: "EMAIL_TAKEN",
        message: "a@b.c is taken",
        details: { field: "email" },
      });
      const details = await getJson(app.url, "/c/taken-details");
      assert.deepEqual(details.body.error, {
        code: "EMAIL_TAKEN",
        message: "Email already registered",
        details: { field: "alias" },
      });
    });

    it("works for errors thrown by guards", async () => {
      const { status, body } = await getJson(app.url, "/c/ok", { headers: { "x-revoked": "1" } });
      assert.equal(status, 401);
      assert.deepEqual(body.error, { code: "KEY_REVOKED", message: "Key revoked" });
    });

    it("a key missing from the catalog is a 500 with a clear log line", async () => {
      const { status, body } = await getJson(app.url, "/c/ghost");
      assert.equal(status, 500);
      assert.deepEqual(body.error, {
        code: "INTERNAL_SERVER_ERROR",
        message: "Internal Server Error",
      });
      assert.equal(JSON.stringify(body).includes("GHOST"), false);
      assert.equal(logger.find("error", "`GHOST_KEY` is not in the error catalog").length, 1);
      const again = await getJson(app.url, "/c/ok");
      assert.equal(again.status, 200); // the app keeps serving
    });
  });

  describe(`error catalog, problem details (${adapter})`, () => {
    let app: RunningApp;
    before(async () => app = await boot(ProblemModule, adapter));
    after(() => app.close());

    it("sends problem details with code = key", async () => {
      const { status, headers, body } = await getJson(app.url, "/c/missing-user");
      assert.equal(status, 404);
      assert.equal(headers.get("content-type")?.startsWith("application/problem+json"), true);
      assert.deepEqual(body, {
        type: "https://api.example.com/problems/user-not-found",
        title: "Not Found",
        status: 404,
        detail: "User not found",
        instance: "/c/missing-user",
        code: "USER_NOT_FOUND",
      });
    });

    it("gives errorCodeMapper the key as defaultCode", async () => {
      const { body } = await getJson(app.url, "/c/taken");
      assert.equal(body.code, "EMAIL_CONFLICT");
      assert.deepEqual(body.details, { field: "email" });
    });
  });
}

// deno-lint-ignore no-explicit-any
type Json = Record<string, any>;

describe("error catalog in OpenAPI", () => {
  it("documents catalog errors by key, matching what is sent", async () => {
    const app = await boot(EnvelopeModule, "express");
    try {
      const document = SwaggerModule.createDocument(app.app, new DocumentBuilder().build());
      const responses = (document.paths["/c/missing-user"].get as Json).responses;
      const examples = responses["404"].content["application/json"].examples;
      const sent = await getJson(app.url, "/c/missing-user");
      assert.deepEqual(examples.USER_NOT_FOUND.value, sent.body);
      assert.equal(
        responses["401"].content["application/json"].examples.KEY_REVOKED.value.error
          .code,
        "KEY_REVOKED",
      );
      const problem = (document.paths["/c/taken"].get as Json).responses["409"].content;
      assert.deepEqual(problem["application/problem+json"].examples.EMAIL_TAKEN.value.details, {
        field: "email",
      });
    } finally {
      await app.close();
    }
  });

  it("checks keys against the catalog", () => {
    // @ts-expect-error: not a key of the catalog
    assert.throws(() => ApiSafeCatalogErrors(Errors, ["USER_NOT_FOUD"]), /USER_NOT_FOUD/);
  });
});

describe("errorCatalog option", () => {
  it("is validated at registration", () => {
    assert.throws(
      () => SafeResponseModule.register({ errorCatalog: {} as never }),
      /errorCatalog/,
    );
  });
});
