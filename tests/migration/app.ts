/**
 * An app written for `@nestarc/safe-response` 0.14 and `@nestarc/api-keys` 0.1 against their
 * documented API (names and behaviours: /work/shared/facts/migration.md), migrated as
 * docs/migration.md says: only the import lines (each says what it was) and the configuration
 * changes of the guide (marked "migration:") differ from the original. It serves the scenario
 * routes (tests/scenarios: written once, built here from this app's imports by `nestScenarioApp`)
 * and a users API of its own.
 */
import "reflect-metadata";
import {
  BadRequestException,
  type CallHandler,
  Controller,
  type ExecutionContext,
  Get,
  HttpException,
  type INestApplication,
  Injectable,
  Module,
  type NestInterceptor,
  Param,
  Post,
  Query,
  type Type,
  UseInterceptors,
} from "@nestjs/common";
import { ApiProperty, DocumentBuilder, type OpenAPIObject, SwaggerModule } from "@nestjs/swagger";
import { catchError, type Observable } from "rxjs";
// was: import { ApiKeysGuard, ..., RequireScope } from "@nestarc/api-keys";
import { InMemoryApiKeyStorage } from "@saferoute/api-kit/api-keys";
import {
  ApiKeysGuard,
  ApiKeysModule,
  CurrentApiKey,
  RequireEnvironment,
  RequireScope,
} from "@saferoute/api-kit/api-keys/nest";
// was: import { DEFAULT_ERROR_CODE_MAP, defineErrors } from "@nestarc/safe-response";
import { DEFAULT_ERROR_CODE_MAP, defineErrors } from "@saferoute/api-kit/safe-response";
// was: import { CursorPaginated, ..., SuccessCode } from "@nestarc/safe-response";
import {
  CursorPaginated,
  Deprecated,
  FieldSelection,
  FilterMeta,
  Paginated,
  ProblemType,
  RawResponse,
  ResponseMessage,
  SafeException,
  SafeResponseModule,
  type SafeResponseModuleOptions,
  SortMeta,
  SuccessCode,
} from "@saferoute/api-kit/safe-response/nest";
// was: import { ApiCursorPaginatedSafeResponse, ..., SafePaginatedEndpoint } from "@nestarc/safe-response";
import {
  ApiCursorPaginatedSafeResponse,
  ApiPaginatedSafeResponse,
  ApiSafeErrorResponse,
  ApiSafeErrorResponses,
  ApiSafeResponse,
  applyGlobalErrors,
  applySchemaNames,
  SafeCursorPaginatedEndpoint,
  SafeEndpoint,
  SafePaginatedEndpoint,
} from "@saferoute/api-kit/safe-response/openapi";
import { nestScenarioApp } from "../scenarios/nest_app.ts";
import { CATALOG, SCENARIO_PEPPER, type ScenarioMode } from "../scenarios/spec.ts";

/** The pepper of the deployment that ran `@nestarc/api-keys` (its keys' `pepperVersion` 1). */
export const OLD_PEPPER = "the-old-deployment-pepper-of-32-bytes-or-more";

export const errors = defineErrors({
  ...CATALOG,
  USER_NOT_FOUND: { status: 404, message: "User not found", description: "No user has this id" },
  EMAIL_TAKEN: { status: 409, message: "Email already registered", details: { field: "email" } },
});

export class UserDto {
  @ApiProperty({ example: 1 })
  id!: number;

  @ApiProperty({ example: "Ada" })
  name!: string;
}

const USERS: UserDto[] = [{ id: 1, name: "Ada" }, { id: 2, name: "Grace" }, {
  id: 3,
  name: "Linus",
}];

/** The app's own interceptor: it knows Nest's HttpException and nothing of the envelope. */
@Injectable()
export class HttpErrorAudit implements NestInterceptor {
  static readonly seen: string[] = [];

  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(catchError((error: unknown) => {
      HttpErrorAudit.seen.push(
        error instanceof HttpException ? `HttpException ${error.getStatus()}` : "unknown",
      );
      throw error;
    }));
  }
}

@Controller("users")
@UseInterceptors(HttpErrorAudit)
export class UsersController {
  @Get()
  @Paginated({ maxLimit: 100 })
  @ApiPaginatedSafeResponse(UserDto)
  findAll(@Query("page") page = "1", @Query("limit") limit = "2") {
    const p = Number(page);
    const l = Number(limit);
    return { data: USERS.slice((p - 1) * l, p * l), total: USERS.length, page: p, limit: l };
  }

  @Get("feed")
  @CursorPaginated()
  @ApiCursorPaginatedSafeResponse(UserDto)
  feed() {
    return { data: USERS.slice(0, 2), nextCursor: "c2", hasMore: true, limit: 2 };
  }

  @Get("health")
  @RawResponse()
  health() {
    return { status: "ok" };
  }

  @Get("legacy")
  @Deprecated({ sunset: "2030-01-01T00:00:00.000Z", link: "/users" })
  legacy() {
    return USERS;
  }

  @Get("nothing")
  nothing() {
    return undefined;
  }

  @Get("crash")
  crash() {
    throw new Error("connection refused: postgres://app:hunter2@db/users");
  }

  @Get("unknown-key")
  unknownKey() {
    throw new SafeException("NOT_IN_THE_CATALOG");
  }

  @Post()
  @SuccessCode("USER_CREATED")
  @ResponseMessage("User created")
  @ApiSafeResponse(UserDto, { statusCode: 201 })
  @ApiSafeErrorResponses([400, {
    status: errors.EMAIL_TAKEN.status,
    code: "EMAIL_TAKEN",
    message: errors.EMAIL_TAKEN.message,
  }])
  create(@Query("email") email?: string) {
    if (email === undefined) throw new BadRequestException(["email must be an email"]);
    if (email === "taken@example.com") throw new SafeException("EMAIL_TAKEN");
    return { id: USERS.length + 1, name: email };
  }

  @Get(":id")
  @ApiSafeResponse(UserDto)
  @ApiSafeErrorResponse(errors.USER_NOT_FOUND.status, {
    code: "USER_NOT_FOUND",
    message: errors.USER_NOT_FOUND.message,
    description: errors.USER_NOT_FOUND.description,
  })
  @ApiSafeErrorResponse(400, { code: DEFAULT_ERROR_CODE_MAP[400] })
  findOne(@Param("id") id: string) {
    const user = USERS.find((candidate) => String(candidate.id) === id);
    if (user === undefined) throw new SafeException("USER_NOT_FOUND");
    return user;
  }
}

/** A hundred people, for the routes that page by their own size. */
const PEOPLE: UserDto[] = Array.from({ length: 100 }, (_, i) => ({ id: i + 1, name: `P${i + 1}` }));

/** Page sizes a 0.14 handler chose itself, below the routes' `maxLimit`. */
export const OWN_LIMITS = { offset: 20, cursor: 10 } as const;

/** The 0.14 way: the handler parses `page`/`limit` and returns its own `limit`. */
function ownOffsetPage(query: { page?: string; limit?: string }) {
  const page = Number(query.page ?? "1");
  const limit = Math.min(Number(query.limit ?? OWN_LIMITS.offset), OWN_LIMITS.offset);
  return {
    data: PEOPLE.slice((page - 1) * limit, page * limit),
    total: PEOPLE.length,
    page,
    limit,
  };
}

/** The 0.14 way for cursors: the cursor is an index, the page size the handler's. */
function ownCursorPage(query: { cursor?: string }) {
  const start = Number(query.cursor ?? "0");
  const end = start + OWN_LIMITS.cursor;
  const more = end < PEOPLE.length;
  return {
    data: PEOPLE.slice(start, end),
    nextCursor: more ? String(end) : null,
    hasMore: more,
    limit: OWN_LIMITS.cursor,
  };
}

@Controller("people")
export class PeopleController {
  @Get()
  @Paginated({ maxLimit: 100, links: true })
  list(@Query() query: { page?: string; limit?: string }) {
    return ownOffsetPage(query);
  }

  @Get("feed")
  @CursorPaginated({ maxLimit: 25, links: true })
  feed(@Query() query: { cursor?: string }) {
    return ownCursorPage(query);
  }

  @Get("endpoint")
  @SafePaginatedEndpoint(UserDto, { maxLimit: 100, links: true })
  endpoint(@Query() query: { page?: string; limit?: string }) {
    return ownOffsetPage(query);
  }

  @Get("endpoint-feed")
  @SafeCursorPaginatedEndpoint(UserDto, { maxLimit: 25, links: true })
  endpointFeed(@Query() query: { cursor?: string }) {
    return ownCursorPage(query);
  }

  @Get("whole/:id")
  @SafeEndpoint(UserDto, { fieldSelection: false })
  whole(@Param("id") id: string) {
    return PEOPLE[Number(id) - 1];
  }

  @Get("brief/:id")
  @SafeEndpoint(UserDto, { fieldSelection: { maxFields: 1 }, errorFormat: "safe" })
  brief(@Param("id") id: string) {
    return PEOPLE[Number(id) - 1];
  }
}

/** The scenario routes, written with this app's imports. */
const scenarioApp = nestScenarioApp({
  ApiKeysGuard,
  ApiKeysModule,
  CurrentApiKey,
  CursorPaginated,
  defineErrors,
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
}, {
  errorCatalog: errors,
  safeResponse: { linkHeader: true }, // migration: pagination links in a Link header too
  apiKeys: {
    // migration: the old deployment's pepper kept as its version, keys of its layout accepted
    peppers: { 1: OLD_PEPPER, 2: SCENARIO_PEPPER },
    currentPepperVersion: 2,
    legacyKeyLayouts: ["nestarc-v0"],
  },
});

/** The global errors of the OpenAPI document (as the module's `swagger` option gives them). */
export const options: SafeResponseModuleOptions = { swagger: { globalErrors: [401, 500] } };

/** The app's root module, sending errors as envelopes or (`"problem"`) problem details. */
export function appModule(mode: ScenarioMode): Type {
  @Module({ imports: [scenarioApp(mode)], controllers: [UsersController, PeopleController] })
  class AppModule {}
  return AppModule;
}

/** The app's OpenAPI document, as its `main.ts` builds it for `SwaggerModule.setup`. */
export function buildDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder().setTitle("Users").setVersion("1.0").build();
  const document = applyGlobalErrors(SwaggerModule.createDocument(app, config), options);
  return applySchemaNames(document, { schemaNames: "dto" }); // migration: the generated client's names
}
