/**
 * Error resolution over HTTP with Nest 12 (the repository's Nest): an
 * `HttpException`'s `errorCode` (Nest 12's option, or its body's field)
 * becomes the error's code, in the error envelope and in problem details, on
 * Express and Fastify.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  BadRequestException,
  ConflictException,
  Controller,
  Get,
  HttpException,
  Module,
} from "@nestjs/common";
import { SafeResponseModule } from "../../../safe_response/nest/mod.ts";
import { ADAPTERS, boot, getJson } from "./helpers.ts";

@Controller("codes")
class CodesController {
  @Get("option")
  option() {
    throw new ConflictException("Email already registered", { errorCode: "EMAIL_TAKEN" });
  }

  @Get("body")
  body() {
    throw new HttpException({ message: "Quota spent", errorCode: "QUOTA_SPENT" }, 402);
  }

  @Get("none")
  none() {
    throw new BadRequestException("Plain");
  }
}

@Module({ imports: [SafeResponseModule.register()], controllers: [CodesController] })
class EnvelopeModule {}

@Module({
  imports: [SafeResponseModule.register({ problemDetails: true })],
  controllers: [CodesController],
})
class ProblemModule {}

for (const adapter of ADAPTERS) {
  describe(`Nest 12 errorCode (${adapter})`, () => {
    it("is the error envelope's code, from the option or the body", async () => {
      const { url, close } = await boot(EnvelopeModule, adapter);
      try {
        const option = await getJson(url, "/codes/option");
        assert.equal(option.status, 409);
        assert.deepEqual(option.body.error, {
          code: "EMAIL_TAKEN",
          message: "Email already registered",
        });
        const body = await getJson(url, "/codes/body");
        assert.equal(body.status, 402);
        assert.equal((body.body.error as { code: string }).code, "QUOTA_SPENT");
        const none = await getJson(url, "/codes/none");
        assert.equal((none.body.error as { code: string }).code, "BAD_REQUEST");
      } finally {
        await close();
      }
    });

    it("is the problem-details code", async () => {
      const { url, close } = await boot(ProblemModule, adapter);
      try {
        const { status, body } = await getJson(url, "/codes/option");
        assert.equal(status, 409);
        assert.equal(body.code, "EMAIL_TAKEN");
        assert.equal(body.detail, "Email already registered");
      } finally {
        await close();
      }
    });
  });
}
