/**
 * The OpenAPI test app: every documentation decorator and composite, in
 * envelope mode or problem-details mode, with the requests that make each
 * documented response happen.
 */
import "reflect-metadata";
import {
  applyDecorators,
  BadRequestException,
  ConflictException,
  Controller,
  Get,
  GoneException,
  HttpException,
  Module,
  NotFoundException,
  Post,
  Query,
  type Type,
  UnauthorizedException,
  UnprocessableEntityException,
  UseGuards,
} from "@nestjs/common";
import type { INestApplication } from "@nestjs/common";
import { ApiOperation, ApiProperty, DocumentBuilder, SwaggerModule } from "@nestjs/swagger";
import type {
  CursorPaginationQuery,
  OffsetPaginationQuery,
} from "../../../safe_response/pagination_query.ts";
import {
  CursorPaginated,
  Deprecated,
  Paginated,
  PaginationQuery,
  ProblemType,
  SafeResponse,
  SafeResponseModule,
  type SafeResponseModuleOptions,
  SkipGlobalErrors,
} from "../../../safe_response/nest/mod.ts";
import {
  ApiCursorPaginatedSafeResponse,
  ApiPaginatedSafeResponse,
  ApiSafeErrorResponse,
  ApiSafeErrorResponses,
  ApiSafeProblemResponse,
  ApiSafeResponse,
  applyGlobalErrors,
  SafeCursorPaginatedEndpoint,
  SafeEndpoint,
  SafePaginatedEndpoint,
} from "../../../safe_response/openapi/mod.ts";
import type {
  SafeErrorResponseConfig,
  SafeErrorResponseOptions,
} from "../../../safe_response/mod.ts";
import { headerDenyGuard } from "../nest/helpers.ts";

export type Mode = "envelope" | "problem";

export const MODES: readonly Mode[] = ["envelope", "problem"];

export class ItemDto {
  @ApiProperty({ example: "1" })
  id!: string;
  @ApiProperty({ example: "One" })
  name!: string;
  @ApiProperty({ type: String, nullable: true, required: false })
  note?: string | null;
}

const ITEMS: ItemDto[] = [
  { id: "1", name: "One", note: null },
  { id: "2", name: "Two" },
  { id: "3", name: "Three", note: "third" },
];

const NAME_INVALID = {
  code: "NAME_INVALID",
  message: "Name is invalid",
  details: ["name must be a string"],
};

/** Module options of the app in `mode` (also given to `applyGlobalErrors`). */
export function openApiOptions(mode: Mode): SafeResponseModuleOptions {
  return {
    requestId: true,
    responseTime: true,
    errorCodes: { 409: "STATE_CONFLICT" },
    problemDetails: mode === "problem" ? { baseUrl: "https://errors.example.com" } : false,
    swagger: {
      globalErrors: [401, { status: 409, description: "State conflict" }, {
        status: 500,
        message: "Unexpected error",
      }],
    },
  };
}

/** Throws what `?fail=<status>` asks for. */
function failWith(fail: string | undefined): void {
  switch (fail) {
    case undefined:
      return;
    case "400":
      throw new BadRequestException();
    case "404":
      throw new NotFoundException({ code: "ITEM_NOT_FOUND", message: "No such item" });
    case "409":
      throw new ConflictException();
    case "410":
      throw new GoneException();
    case "418":
      throw new HttpException("I'm a teapot", 418);
    case "422":
      throw new UnprocessableEntityException(NAME_INVALID);
    default:
      throw new Error(`internal failure ${fail}`);
  }
}

const DenyGuard = headerDenyGuard(() => new UnauthorizedException());

function controllers(mode: Mode): Type<unknown>[] {
  const problemDetails = mode === "problem";
  const ApiError = (status: number, options?: SafeErrorResponseOptions) =>
    problemDetails
      ? ApiSafeProblemResponse(status, options)
      : ApiSafeErrorResponse(status, options);
  const ApiErrors = (configs: SafeErrorResponseConfig[]) =>
    problemDetails
      ? applyDecorators(
        ...configs.map((config) =>
          typeof config === "number"
            ? ApiSafeProblemResponse(config)
            : ApiSafeProblemResponse(config.status, config)
        ),
      )
      : ApiSafeErrorResponses(configs);

  @Controller("catalog")
  @UseGuards(DenyGuard)
  class CatalogController {
    @Get("items/:id")
    @ProblemType("https://errors.example.com/item")
    @ApiSafeResponse(ItemDto)
    @ApiError(404, { code: "ITEM_NOT_FOUND", message: "No such item" })
    find(@Query("fail") fail?: string): ItemDto {
      failWith(fail);
      return ITEMS[0];
    }

    @Get("items")
    @ApiSafeResponse(ItemDto, { isArray: true, description: "All items" })
    list(): ItemDto[] {
      return ITEMS;
    }

    @Post("items")
    @ApiSafeResponse(ItemDto, { statusCode: 201, description: "Created item" })
    @ApiErrors([400, { status: 422, ...NAME_INVALID }])
    create(@Query("fail") fail?: string): ItemDto {
      failWith(fail);
      return ITEMS[1];
    }

    @Get("pages")
    @Paginated({ links: true })
    @ApiPaginatedSafeResponse(ItemDto)
    pages() {
      return { data: ITEMS.slice(0, 2), total: 3, page: 1, limit: 2 };
    }

    @Get("feed")
    @CursorPaginated({ maxLimit: 3, defaultLimit: 2 })
    @ApiCursorPaginatedSafeResponse(ItemDto, { description: "A feed page" })
    feed(@PaginationQuery() { cursor, limit }: CursorPaginationQuery) {
      const start = cursor === undefined ? 0 : Number(cursor) || 0;
      const end = start + limit!;
      const more = end < ITEMS.length;
      return {
        data: ITEMS.slice(start, end),
        nextCursor: more ? `${end}` : null,
        hasMore: more,
        limit,
      };
    }

    @Post("jobs")
    @SafeResponse({ statusCode: 202, description: "Job accepted" })
    job() {
      return { jobId: "j1", queued: true };
    }

    @Get("legacy")
    @ApiOperation({ summary: "Legacy listing" })
    @Deprecated({ since: "2025-01-01", sunset: "2027-01-01", link: "https://example.com/v2" })
    @SafeResponse()
    @ApiError(410)
    legacy(@Query("fail") fail?: string) {
      failWith(fail);
      return ["legacy"];
    }

    @Get("health")
    @SkipGlobalErrors()
    @SafeResponse({ description: "Always up" })
    health() {
      return "up";
    }
  }

  @Controller("v2")
  @UseGuards(DenyGuard)
  class EndpointsController {
    @Post("items")
    @SafeEndpoint(ItemDto, {
      statusCode: 201,
      description: "Created item",
      message: "Item created",
      code: "ITEM_CREATED",
      errors: [400, { status: 422, ...NAME_INVALID }],
      problemDetails,
    })
    create(@Query("fail") fail?: string): ItemDto {
      failWith(fail);
      return ITEMS[2];
    }

    @Get("items")
    @SafeEndpoint(ItemDto, {
      isArray: true,
      sort: true,
      filter: true,
      deprecated: { since: "2025-06-01" },
      problemDetails,
    })
    list() {
      return { data: ITEMS, sort: { field: "name", order: "asc" }, filters: { kind: "all" } };
    }

    @Get("pages")
    @SafePaginatedEndpoint(ItemDto, {
      maxLimit: 2,
      links: true,
      sort: true,
      filter: true,
      message: "A page",
      code: "PAGE",
      errors: [{ status: 404, code: "ITEM_NOT_FOUND", message: "No such item" }],
      problemDetails,
    })
    pages(
      @Query("fail") fail: string | undefined,
      @PaginationQuery() query: OffsetPaginationQuery,
    ) {
      failWith(fail);
      const { page, limit = 2 } = query;
      return {
        data: ITEMS.slice((page - 1) * limit, page * limit),
        total: 3,
        page,
        limit,
        sort: { field: "id", order: "desc" },
        filters: { name: "o" },
      };
    }

    @Get("feed")
    @SafeCursorPaginatedEndpoint(ItemDto, { links: true, errors: [418], problemDetails })
    feed(@Query("fail") fail?: string) {
      failWith(fail);
      return {
        data: ITEMS.slice(1),
        nextCursor: null,
        previousCursor: "1",
        hasMore: false,
        limit: 2,
        totalCount: 3,
      };
    }

    @Post("search")
    @SafePaginatedEndpoint(ItemDto, { description: "Search results", problemDetails })
    search() {
      return { data: ITEMS, total: 3, page: 1, limit: 10 };
    }
  }

  @Controller("internal")
  @SkipGlobalErrors()
  @Deprecated()
  @ProblemType("https://errors.example.com/internal")
  class InternalController {
    @Get("ping")
    @SafeResponse()
    ping() {
      return { pong: true };
    }
  }

  return [CatalogController, EndpointsController, InternalController];
}

/** The root module of the app in `mode`. */
export function openApiModule(mode: Mode): Type<unknown> {
  @Module({
    imports: [SafeResponseModule.register(openApiOptions(mode))],
    controllers: controllers(mode),
    providers: [DenyGuard],
  })
  class OpenApiAppModule {}
  return OpenApiAppModule;
}

/** The document of `app` with the global errors applied. */
export function openApiDocument(app: INestApplication, mode: Mode) {
  const config = new DocumentBuilder().setTitle(`Safe response (${mode})`).setVersion("1")
    .build();
  return applyGlobalErrors(SwaggerModule.createDocument(app, config), openApiOptions(mode));
}

export interface Case {
  method: "GET" | "POST";
  path: string;
  status: number;
  headers?: Record<string, string>;
}

/**
 * Requests producing every documented response: each route's success and
 * route-level errors, and every global error on `GET /catalog/items/{id}`.
 */
export const CASES: readonly Case[] = [
  { method: "GET", path: "/catalog/items/1", status: 200 },
  { method: "GET", path: "/catalog/items/1?fail=404", status: 404 },
  { method: "GET", path: "/catalog/items/1", status: 401, headers: { "x-deny": "1" } },
  { method: "GET", path: "/catalog/items/1?fail=409", status: 409 },
  { method: "GET", path: "/catalog/items/1?fail=500", status: 500 },
  { method: "GET", path: "/catalog/items", status: 200 },
  { method: "POST", path: "/catalog/items", status: 201 },
  { method: "POST", path: "/catalog/items?fail=400", status: 400 },
  { method: "POST", path: "/catalog/items?fail=422", status: 422 },
  { method: "GET", path: "/catalog/pages", status: 200 },
  { method: "GET", path: "/catalog/feed", status: 200 },
  { method: "POST", path: "/catalog/jobs", status: 202 },
  { method: "GET", path: "/catalog/legacy", status: 200 },
  { method: "GET", path: "/catalog/legacy?fail=410", status: 410 },
  { method: "GET", path: "/catalog/health", status: 200 },
  { method: "POST", path: "/v2/items", status: 201 },
  { method: "POST", path: "/v2/items?fail=400", status: 400 },
  { method: "POST", path: "/v2/items?fail=422", status: 422 },
  { method: "GET", path: "/v2/items", status: 200 },
  { method: "GET", path: "/v2/pages", status: 200 },
  { method: "GET", path: "/v2/pages?fail=404", status: 404 },
  { method: "GET", path: "/v2/feed", status: 200 },
  { method: "GET", path: "/v2/feed?fail=418", status: 418 },
  { method: "POST", path: "/v2/search", status: 200 },
  { method: "GET", path: "/internal/ping", status: 200 },
  // The pagination query's 400 (INVALID_PAGINATION_QUERY), on the paginated routes with limits.
  { method: "GET", path: "/catalog/feed?limit=0", status: 400 },
  { method: "GET", path: "/v2/pages?page=0", status: 400 },
];
