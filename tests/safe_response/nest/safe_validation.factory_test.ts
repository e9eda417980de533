/**
 * `safeValidationExceptionFactory` over HTTP, on Express and Fastify: with
 * `validationDetails: "fields"` a nested DTO's failing field is reported as
 * `/address/zip`, input values are never echoed, the default keeps Nest's
 * own message list, and the OpenAPI document of `applyGlobalErrors`
 * describes the shape in use. Problem details carry the same `details`
 * (tests/safe_response/validation_details_test.ts, responder_test.ts).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Body, Controller, Module, Post, ValidationPipe } from "@nestjs/common";
import { DocumentBuilder, SwaggerModule } from "@nestjs/swagger";
import { Type } from "class-transformer";
import { IsString, Length, ValidateNested } from "class-validator";
import type { SafeResponseModuleOptions } from "../../../safe_response/options.ts";
import { SafeResponseModule } from "../../../safe_response/nest/safe_response.module.ts";
import { safeValidationExceptionFactory } from "../../../safe_response/nest/safe_validation.factory.ts";
import { applyGlobalErrors } from "../../../safe_response/openapi/mod.ts";
import {
  MAX_VALIDATION_DETAIL_LENGTH,
  MAX_VALIDATION_DETAILS,
} from "../../../safe_response/validation_details.ts";
import { bodyValidator, documentedResponse } from "../openapi/openapi_validation.ts";
import { ADAPTERS, boot, getJson } from "./helpers.ts";

class AddressDto {
  @IsString()
  @Length(5, 5)
  zip!: string;
}

class UserDto {
  @IsString()
  name!: string;

  @ValidateNested()
  @Type(() => AddressDto)
  address!: AddressDto;
}

class ItemDto {
  @IsString()
  name!: string;
}

class ItemsDto {
  @ValidateNested({ each: true })
  @Type(() => ItemDto)
  items!: ItemDto[];
}

const pipe = new ValidationPipe({
  exceptionFactory: safeValidationExceptionFactory,
  expectedType: UserDto,
});

@Controller("users")
class UsersController {
  @Post()
  create(@Body(pipe) user: UserDto) {
    return user;
  }

  @Post("items")
  items(
    @Body(
      new ValidationPipe({ expectedType: ItemsDto, forbidNonWhitelisted: true, whitelist: true }),
    ) items: ItemsDto,
  ) {
    return items;
  }

  @Post("nest-default")
  createWithNestFactory(@Body(new ValidationPipe({ expectedType: UserDto })) user: UserDto) {
    return user;
  }
}

const moduleWith = (options: SafeResponseModuleOptions) => {
  @Module({ imports: [SafeResponseModule.register(options)], controllers: [UsersController] })
  class ValidationModule {}
  return ValidationModule;
};

const SECRET = "SECRET-zip-value-9f2c";
const INPUT = { name: 42, address: { zip: SECRET } };

const post = (url: string, path: string, body: unknown) =>
  getJson(url, path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });

const FIELDS = [
  { pointer: "/name", messages: ["name must be a string"] },
  {
    pointer: "/address/zip",
    messages: ["zip must be shorter than or equal to 5 characters"],
  },
];

for (const adapter of ADAPTERS) {
  describe(`safeValidationExceptionFactory (${adapter})`, () => {
    it('sends [{ pointer, messages }] with validationDetails: "fields", never the input', async () => {
      const { url, close } = await boot(moduleWith({ validationDetails: "fields" }), adapter);
      try {
        const { status, body } = await post(url, "/users", INPUT);
        assert.equal(status, 400);
        assert.deepEqual(body.error, {
          code: "BAD_REQUEST",
          message: "Validation failed",
          details: FIELDS,
        });
        assert.ok(!JSON.stringify(body).includes(SECRET));
      } finally {
        await close();
      }
    });

    it('keeps Nest\'s message list by default ("messages")', async () => {
      const { url, close } = await boot(moduleWith({}), adapter);
      try {
        const ours = await post(url, "/users", INPUT);
        const nests = await post(url, "/users/nest-default", INPUT);
        assert.deepEqual((ours.body.error as { details: unknown }).details, [
          "name must be a string",
          "address.zip must be shorter than or equal to 5 characters",
        ]);
        assert.deepEqual(ours.body.error, nests.body.error);
      } finally {
        await close();
      }
    });

    it(`bounds the message list: ${MAX_VALIDATION_DETAILS} messages of at most ${MAX_VALIDATION_DETAIL_LENGTH} characters`, async () => {
      const { url, close } = await boot(moduleWith({}), adapter);
      try {
        const many = await post(url, "/users/items", {
          items: Array.from({ length: 20_000 }, () => ({})),
        });
        const details = (many.body.error as { details: string[] }).details;
        assert.equal(many.status, 400);
        assert.equal(details.length, MAX_VALIDATION_DETAILS);
        assert.equal(details[0], "items.0.name must be a string");
        const key = "k".repeat(60_000);
        const long = await post(url, "/users/items", { items: [], [key]: 1 });
        const [message] = (long.body.error as { details: string[] }).details;
        assert.equal(long.status, 400);
        assert.equal(message, `property ${key}`.slice(0, MAX_VALIDATION_DETAIL_LENGTH));
      } finally {
        await close();
      }
    });

    it("is documented in the shape in use by applyGlobalErrors", async () => {
      for (const problemDetails of [false, true]) {
        const options: SafeResponseModuleOptions = {
          validationDetails: "fields",
          problemDetails,
          swagger: { globalErrors: [400] },
        };
        const { app, url, close } = await boot(moduleWith(options), adapter);
        try {
          const document = applyGlobalErrors(
            SwaggerModule.createDocument(app, new DocumentBuilder().build()),
            options,
          );
          const { body, headers } = await post(url, "/users", INPUT);
          const media = documentedResponse(document, "/users", "POST", 400)
            .content[headers.get("content-type")!.split(";")[0]];
          const validate = bodyValidator(document);
          assert.deepEqual(validate(media.schema, body), []);
          // The message list (the other shape) does not fit the documented one.
          const messages = ["name must be a string"];
          const other = problemDetails
            ? { ...body, details: messages }
            : { ...body, error: { ...(body.error as object), details: messages } };
          assert.notDeepEqual(validate(media.schema, other), []);
        } finally {
          await close();
        }
      }
    });
  });
}
