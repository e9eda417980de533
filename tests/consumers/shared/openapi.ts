// The consumer app's OpenAPI half, copied only into the apps that install @nestjs/swagger (the
// matrix's `suite.swaggerOnly`): it documents the controllers of ./app.ts with the decorators of
// @nestjs/swagger and @saferoute/api-kit/safe-response/openapi, applied imperatively (the
// runtime app must compile without swagger), and serves and validates the document. The suite
// loads it by a computed name when CONSUMER_SWAGGER is 1.
import type { INestApplication, Type } from "@nestjs/common";
import { ApiProperty, ApiSecurity, DocumentBuilder, SwaggerModule } from "@nestjs/swagger";
import SwaggerParser from "@apidevtools/swagger-parser";
import {
  ApiCursorPaginatedSafeResponse,
  ApiPaginatedSafeResponse,
  ApiSafeCatalogErrors,
  ApiSafeProblemResponse,
  ApiSafeResponse,
  applyGlobalErrors,
} from "@saferoute/api-kit/safe-response/openapi";
import {
  type ErrorFormat,
  Errors,
  LegacyOrdersController,
  OpsController,
  OrdersController,
  safeResponseOptions,
} from "./app.ts";

class CustomerDto {
  @ApiProperty()
  name!: string;

  @ApiProperty()
  city!: string;
}

class OrderDto {
  @ApiProperty()
  id!: number;

  @ApiProperty({ enum: ["open", "shipped"] })
  status!: string;

  @ApiProperty({ type: CustomerDto })
  customer!: CustomerDto;
}

class OrderRefDto {
  @ApiProperty()
  id!: number;
}

/** Applies `decorators` to the method `name` of `controller`, as `@decorator` syntax would. */
function decorate(controller: Type<unknown>, name: string, ...decorators: MethodDecorator[]): void {
  const prototype = controller.prototype as object;
  for (const decorator of decorators.reverse()) {
    const descriptor = Object.getOwnPropertyDescriptor(prototype, name);
    if (descriptor === undefined) throw new Error(`${controller.name} has no method ${name}`);
    const replaced = decorator(prototype, name, descriptor);
    if (replaced !== undefined) Object.defineProperty(prototype, name, replaced);
  }
}

/** Documents the controllers of ./app.ts (once: their metadata lives on the classes). */
function documentControllers(): void {
  ApiSecurity("api-key")(OrdersController);
  decorate(OrdersController, "list", ApiPaginatedSafeResponse(OrderDto));
  decorate(OrdersController, "create", ApiSafeResponse(OrderRefDto, { statusCode: 201 }));
  decorate(OrdersController, "feed", ApiCursorPaginatedSafeResponse(OrderDto));
  decorate(
    OrdersController,
    "one",
    ApiSafeResponse(OrderDto),
    ApiSafeProblemResponse(404, { code: "NOT_FOUND", message: "order 9 does not exist" }),
  );
  for (const name of ["cancel", "refund"]) {
    decorate(
      OrdersController,
      name,
      ApiSafeCatalogErrors(Errors, ["ORDER_LOCKED"], { problemDetails: true }),
    );
  }
  decorate(LegacyOrdersController, "list", ApiSafeResponse(OrderRefDto, { isArray: true }));
  decorate(OpsController, "limited", ApiSafeResponse(OrderRefDto));
}
documentControllers();

/** The app's OpenAPI document (global errors in `format`), served at /docs and /docs-json. */
export function serveDocument(app: INestApplication, format: ErrorFormat): void {
  const config = new DocumentBuilder()
    .setTitle("consumer")
    .setVersion("1.0.0")
    .addApiKey({ type: "apiKey", in: "header", name: "X-API-Key" }, "api-key")
    .build();
  SwaggerModule.setup(
    "docs",
    app,
    () => applyGlobalErrors(SwaggerModule.createDocument(app, config), safeResponseOptions(format)),
  );
}

/** Validates `document` as OpenAPI 3 (throws what is wrong). */
export async function validateDocument(document: object): Promise<void> {
  // deno-lint-ignore no-explicit-any
  await SwaggerParser.validate(structuredClone(document) as any);
}
