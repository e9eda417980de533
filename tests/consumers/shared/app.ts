// The consumer app's routes and modules, shared by every app under tests/consumers/: run.ts
// copies this folder into each app as `shared/`, where the app compiles it with its own
// TypeScript settings and module system. Only the adapter-specific bootstrap stays in each app.
import "reflect-metadata";
import {
  Controller,
  Get,
  type INestApplication,
  Module,
  NotFoundException,
  Param,
  Post,
  Query,
  UseGuards,
} from "@nestjs/common";
import { ApiProperty, ApiSecurity, DocumentBuilder, SwaggerModule } from "@nestjs/swagger";
import { InMemoryApiKeyStorage } from "@saferoute/api-kit/api-keys";
import {
  ApiKeysGuard,
  ApiKeysModule,
  RequireEnvironment,
  RequireScope,
} from "@saferoute/api-kit/api-keys/nest";
import { Paginated, ProblemType, SafeResponseModule } from "@saferoute/api-kit/safe-response/nest";
import {
  ApiPaginatedSafeResponse,
  applyGlobalErrors,
} from "@saferoute/api-kit/safe-response/openapi";

/** A clock the checks can move forward, to expire a key without waiting. */
export const clock = {
  offsetMs: 0,
  now: (): Date => new Date(Date.now() + clock.offsetMs),
};

/** The problem type of an unknown order. */
export const ORDER_NOT_FOUND = "https://consumer.example/problems/order-not-found";

class OrderDto {
  @ApiProperty()
  id!: number;
}

const ORDERS = Array.from({ length: 5 }, (_, i) => ({ id: i + 1 }));

@ApiSecurity("api-key")
@UseGuards(ApiKeysGuard)
@Controller("orders")
class OrdersController {
  @Get()
  @RequireScope("orders", "read")
  @Paginated({ maxLimit: 50 })
  @ApiPaginatedSafeResponse(OrderDto)
  list(@Query("page") page = "1", @Query("limit") limit = "2") {
    const p = Number(page);
    const l = Number(limit);
    return {
      data: ORDERS.slice((p - 1) * l, p * l),
      total: ORDERS.length,
      page: p,
      limit: l,
    };
  }

  @Post()
  @RequireScope("orders", "write")
  create() {
    return { id: ORDERS.length + 1 };
  }

  @Get("live")
  @RequireEnvironment("live")
  @RequireScope("orders", "read")
  live() {
    return { live: true };
  }

  @Get(":id")
  @RequireScope("orders", "read")
  @ProblemType(ORDER_NOT_FOUND)
  one(@Param("id") id: string) {
    const order = ORDERS.find((o) => String(o.id) === id);
    if (order === undefined) {
      throw new NotFoundException(`order ${id} does not exist`);
    }
    return order;
  }
}

@Module({
  imports: [
    ApiKeysModule.forRoot({
      peppers: { 1: "consumer-app-pepper-0123456789abcdef" },
      storage: new InMemoryApiKeyStorage(),
      ttlPolicy: { allowNeverExpires: true },
      clock: clock.now,
    }),
    SafeResponseModule.register({
      problemDetails: { baseUrl: "https://consumer.example/problems" },
      requestId: true,
    }),
  ],
  controllers: [OrdersController],
})
export class AppModule {}

/**
 * Serves Swagger at /docs on a created app, starts it on 127.0.0.1 (port 0 = any free port) and
 * returns its base URL.
 */
export async function serve(app: INestApplication, port: number): Promise<string> {
  const config = new DocumentBuilder()
    .setTitle("consumer")
    .setVersion("1.0.0")
    .addApiKey({ type: "apiKey", in: "header", name: "X-API-Key" }, "api-key")
    .build();
  SwaggerModule.setup(
    "docs",
    app,
    () =>
      applyGlobalErrors(SwaggerModule.createDocument(app, config), {
        swagger: { globalErrors: [401, 403, 500] },
      }),
  );
  await app.listen(port, "127.0.0.1");
  const address = app.getHttpServer().address();
  if (address === null || typeof address === "string") {
    throw new Error("no TCP address");
  }
  return `http://127.0.0.1:${address.port}`;
}
