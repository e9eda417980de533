/**
 * The scenario app on Nest: the routes of `spec.ts` as controllers with the
 * Nest decorators, `ApiKeysModule` and `SafeResponseModule`, plus the
 * Nest-only capabilities (`ValidationPipe`, `@nestjs/throttler`,
 * `nestjs-cls`, `nestjs-i18n`). The app is built by `nestScenarioApp` from
 * the library names it is given: this library's (`_lib.ts`), or those a
 * migrated app imports (tests/migration/app.ts), so the routes are written
 * once.
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
import * as lib from "./_lib.ts";
import type { ApiKeyContext } from "./_lib.ts";
import {
  BOOM_SECRET,
  type Capabilities,
  CATALOG,
  feedPage,
  findItem,
  limitedHeaders,
  listItems,
  PROFILE,
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

type Lib = typeof lib;

/**
 * The library names the scenario app is written with. `SafeException` is
 * any catalog exception taking a key (the core's, or the Nest entry's
 * `HttpException`).
 */
export type NestScenarioLib =
  & Pick<
    Lib,
    | "ApiKeysGuard"
    | "ApiKeysModule"
    | "CurrentApiKey"
    | "CursorPaginated"
    | "defineErrors"
    | "Deprecated"
    | "FieldSelection"
    | "FilterMeta"
    | "InMemoryApiKeyStorage"
    | "Paginated"
    | "ProblemType"
    | "RawResponse"
    | "RequireEnvironment"
    | "RequireScope"
    | "ResponseMessage"
    | "SafeResponseModule"
    | "SortMeta"
    | "SuccessCode"
  >
  & { SafeException: new (key: string, options?: { details?: unknown }) => Error };

/** What an app built on the scenario app sets beyond the library names. */
export interface NestScenarioAppOptions {
  /**
   * The error catalog of `SafeResponseModule` (default `defineErrors(CATALOG)`);
   * it must have the keys of `CATALOG`.
   */
  errorCatalog?: NonNullable<Parameters<Lib["SafeResponseModule"]["register"]>[0]>["errorCatalog"];
  /** Options of `SafeResponseModule.register` over the scenario's. */
  safeResponse?: Omit<
    NonNullable<Parameters<Lib["SafeResponseModule"]["register"]>[0]>,
    "errorCatalog"
  >;
  /** Options of `ApiKeysModule.forRoot` over the scenario's (pepper, fresh in-memory storage). */
  apiKeys?: Partial<Parameters<Lib["ApiKeysModule"]["forRoot"]>[0]>;
}

const reader = (query: Record<string, string | undefined>): QueryReader => (name) => query[name];

/** A response of either adapter (Express `res`, Fastify `reply`). */
interface HeaderSink {
  header(name: string, value: string): unknown;
}

/**
 * Builds the scenario app from `names`: returns its root module in a mode
 * (each with a fresh key storage). The controllers are declared once per call.
 */
export function nestScenarioApp(
  names: NestScenarioLib,
  app: NestScenarioAppOptions = {},
): (mode: ScenarioMode) => DynamicModule {
  const {
    ApiKeysGuard,
    ApiKeysModule,
    CurrentApiKey,
    CursorPaginated,
    Deprecated,
    FieldSelection,
    FilterMeta,
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
  } = names;
  // Defined on first use: importing this file defines no catalog beside a migrated app's.
  let errorCatalog = app.errorCatalog;

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

    @Get("profile")
    @FieldSelection(ROUTES.profile.options.fieldSelection)
    profile() {
      return PROFILE;
    }

    @Get("unselected")
    @FieldSelection(ROUTES.unselected.options.fieldSelection)
    unselected() {
      return PROFILE;
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

  return (mode: ScenarioMode): DynamicModule => {
    errorCatalog ??= names.defineErrors(CATALOG);
    @Module({})
    class ScenarioAppModule {}
    return {
      module: ScenarioAppModule,
      imports: [
        ApiKeysModule.forRoot({
          peppers: { 1: SCENARIO_PEPPER },
          storage: new InMemoryApiKeyStorage(),
          ...app.apiKeys,
        }),
        SafeResponseModule.register({
          ...safeResponseOptions(mode),
          ...app.safeResponse,
          errorCatalog,
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
  };
}

/** The scenario app's root module in `mode`, built from this library (`_lib.ts`). */
export const nestScenarioModule: (mode: ScenarioMode) => DynamicModule = nestScenarioApp(lib);

/** A well-formed key the scenario service never stored. */
export const unknownKey = (): string => lib.generateKey({ environment: "live" }).raw;
