/**
 * The scenario app on Nest: the routes of `spec.ts` as controllers with the
 * Nest decorators, `ApiKeysModule` and `SafeResponseModule`, plus the
 * Nest-only capabilities (`ValidationPipe`, `@nestjs/throttler`,
 * `nestjs-cls`, `nestjs-i18n`).
 *
 * @module
 */
import "reflect-metadata";
import { fileURLToPath } from "node:url";
import {
  Body,
  Controller,
  type DynamicModule,
  Get,
  Module,
  Param,
  Post,
  Query,
  Res,
  UseGuards,
  ValidationPipe,
} from "@nestjs/common";
import { Throttle, ThrottlerGuard, ThrottlerModule } from "@nestjs/throttler";
import { IsString } from "class-validator";
import { ClsModule } from "nestjs-cls";
import { I18nModule, QueryResolver } from "nestjs-i18n";
import {
  type ApiKeyContext,
  ApiKeysGuard,
  ApiKeysModule,
  CurrentApiKey,
  CursorPaginated,
  defineErrors,
  Deprecated,
  FieldSelection,
  FilterMeta,
  generateKey,
  InMemoryApiKeyStorage,
  Paginated,
  ProblemType,
  RawResponse,
  RequireEnvironment,
  RequireScope,
  ResponseMessage,
  SafeException,
  SafeResponseModule,
  SortMeta,
  SuccessCode,
} from "./_lib.ts";
import {
  BOOM_SECRET,
  type Capabilities,
  CATALOG,
  feedPage,
  findItem,
  limitedHeaders,
  listItems,
  type QueryReader,
  ROUTES,
  safeResponseOptions,
  SCENARIO_PEPPER,
  type ScenarioMode,
  THROTTLE_LIMIT,
} from "./spec.ts";

/** The Nest binding has every capability. */
export const NEST_CAPABILITIES: Capabilities = Object.freeze({
  validationPipe: true,
  throttler: true,
  cls: true,
  i18n: true,
});

const { items, item, create, legacy } = ROUTES;

const reader = (query: Record<string, string | undefined>): QueryReader => (name) => query[name];

/** A response of either adapter (Express `res`, Fastify `reply`). */
interface HeaderSink {
  header(name: string, value: string): unknown;
}

@Controller()
class ScenarioController {
  @Get("plain")
  @ResponseMessage(ROUTES.plain.options.responseMessage)
  plain() {
    return { hello: "world" };
  }

  @Get("items")
  @UseGuards(ApiKeysGuard)
  @RequireScope(items.keys.requiredScope.resource, items.keys.requiredScope.level)
  @Paginated(items.options.paginated)
  @SortMeta()
  @FilterMeta()
  @FieldSelection()
  list(@Query() query: Record<string, string | undefined>) {
    return listItems(reader(query));
  }

  @Get("items/:id")
  @UseGuards(ApiKeysGuard)
  @RequireScope(item.keys.requiredScope.resource, item.keys.requiredScope.level)
  @ProblemType(item.options.problemType)
  get(@Param("id") id: string) {
    const found = findItem(id);
    if (found === undefined) throw new SafeException("ITEM_NOT_FOUND", { details: { id } });
    return found;
  }

  @Post("items")
  @UseGuards(ApiKeysGuard)
  @RequireScope(create.keys.requiredScope.resource, create.keys.requiredScope.level)
  @RequireEnvironment(create.keys.requiredEnvironment)
  @SuccessCode(create.options.successCode)
  @ResponseMessage(create.options.responseMessage)
  create(@Body() body: { name?: unknown }) {
    return { id: "it_new", name: body.name };
  }

  @Get("feed")
  @CursorPaginated(ROUTES.feed.options.cursorPaginated)
  feed(@Query() query: Record<string, string | undefined>) {
    return feedPage(reader(query));
  }

  @Get("legacy")
  @UseGuards(ApiKeysGuard)
  @RequireScope(legacy.keys.requiredScope.resource, legacy.keys.requiredScope.level)
  @Deprecated(legacy.options.deprecated)
  legacy() {
    return findItem("it_01");
  }

  @Get("boom")
  boom() {
    throw new Error(BOOM_SECRET);
  }

  @Get("raw")
  @RawResponse()
  raw() {
    return { raw: true };
  }

  @Get("limited")
  limited(
    @Query() query: Record<string, string | undefined>,
    @Res({ passthrough: true }) response: HeaderSink,
  ) {
    const headers = limitedHeaders(reader(query));
    for (const [name, value] of headers) response.header(name, value);
    if (headers.some(([name]) => name === "Retry-After")) throw new SafeException("SLOW_DOWN");
    return { ok: true };
  }

  @Get("whoami")
  @UseGuards(ApiKeysGuard)
  whoami(@CurrentApiKey() apiKey: ApiKeyContext) {
    return { tenantId: apiKey.tenantId, environment: apiKey.environment, scopes: apiKey.scopes };
  }
}

class NameDto {
  @IsString()
  name!: string;
}

/** The routes of the Nest-only capabilities. */
@Controller()
class CapabilitiesController {
  @Post("validated")
  validated(@Body(new ValidationPipe({ expectedType: NameDto })) body: NameDto) {
    return body;
  }

  @Get("throttled")
  @UseGuards(ThrottlerGuard)
  @Throttle({ default: { limit: THROTTLE_LIMIT, ttl: 60_000 } })
  throttled() {
    return { ok: true };
  }

  @Get("greeting")
  @ResponseMessage("messages.created")
  greeting() {
    return {};
  }
}

/** The scenario app's root module in `mode`, with a fresh key storage. */
export function nestScenarioModule(mode: ScenarioMode): DynamicModule {
  @Module({})
  class ScenarioAppModule {}
  return {
    module: ScenarioAppModule,
    imports: [
      ApiKeysModule.forRoot({
        peppers: { 1: SCENARIO_PEPPER },
        storage: new InMemoryApiKeyStorage(),
      }),
      SafeResponseModule.register({
        ...safeResponseOptions(mode),
        errorCatalog: defineErrors(CATALOG),
        context: { fields: { traceId: "traceId" } },
        i18n: true,
      }),
      ThrottlerModule.forRoot({ throttlers: [{ name: "default", ttl: 60_000, limit: 100 }] }),
      ClsModule.forRoot({
        global: true,
        middleware: {
          mount: true,
          setup: (cls, request: { headers: Record<string, string | undefined> }) => {
            cls.set("traceId", request.headers["x-trace-id"]);
          },
        },
      }),
      I18nModule.forRoot({
        fallbackLanguage: "en",
        loaderOptions: {
          path: fileURLToPath(new URL("../safe_response/nest/fixtures/i18n/", import.meta.url)),
          watch: false,
        },
        resolvers: [new QueryResolver(["lang"])],
      }),
    ],
    controllers: [ScenarioController, CapabilitiesController],
  };
}

/** A well-formed key the scenario service never stored. */
export const unknownKey = (): string => generateKey({ environment: "live" }).raw;
