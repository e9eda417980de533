/**
 * The Nest apps behind the browser test: one controller of items and a feed
 * decorated with the library's safe-response decorators, mounted by two
 * modules, one answering error envelopes and one answering RFC 9457 problem
 * details (a module-wide option).
 *
 * @module
 */
import {
  type CanActivate,
  Controller,
  type DynamicModule,
  type ExecutionContext,
  Get,
  Injectable,
  Module,
  NotFoundException,
  Param,
  Query,
  UseGuards,
} from "@nestjs/common";
import type { CursorPaginatedResult, PaginatedResult } from "../../safe_response/mod.ts";
import {
  CursorPaginated,
  Deprecated,
  FieldSelection,
  FilterMeta,
  Paginated,
  ProblemType,
  ResponseMessage,
  SafeResponseModule,
  SortMeta,
} from "../../safe_response/nest/mod.ts";

/** An item of the test API. */
export interface Item {
  /** Id, a single letter. */
  id: string;
  /** Label. */
  label: string;
  /** Always `open`, the filtered field. */
  status: "open";
}

/** Every item, in id order. */
export const ITEMS: readonly Item[] = ["a", "b", "c", "d", "e"].map((id) => ({
  id,
  label: `Item ${id.toUpperCase()}`,
  status: "open",
}));

/** Rate-limit headers the guard sets, as a throttler would. */
export const RATE_LIMIT_HEADERS: Readonly<Record<string, string>> = {
  "X-RateLimit-Limit": "10",
  "X-RateLimit-Remaining": "7",
  "X-RateLimit-Reset": "30",
};

/** Problem type of an unknown item. */
export const ITEM_NOT_FOUND_TYPE = "https://example.com/problems/item-not-found";

/** Sets {@link RATE_LIMIT_HEADERS} on the response (Express or Fastify) and lets it pass. */
@Injectable()
class RateLimitHeadersGuard implements CanActivate {
  /** Sets the headers; always `true`. */
  canActivate(context: ExecutionContext): boolean {
    const response = context.switchToHttp().getResponse();
    for (const [name, value] of Object.entries(RATE_LIMIT_HEADERS)) {
      if (typeof response.setHeader === "function") response.setHeader(name, value);
      else response.header(name, value);
    }
    return true;
  }
}

function notFound(id: string): NotFoundException {
  return new NotFoundException({ code: "ITEM_NOT_FOUND", message: `Item ${id} not found` });
}

/** `/items`: offset pagination with sort, filters, links and field selection; one item. */
@Controller("items")
class ItemsController {
  /** A page of items (`page`, `limit`, `fields`). */
  @Get()
  @Paginated({ maxLimit: 10, links: true })
  @SortMeta()
  @FilterMeta()
  @FieldSelection()
  list(@Query("page") page = "1", @Query("limit") limit = "2"): PaginatedResult<Item> {
    const pageNumber = Number(page);
    const size = Math.min(Number(limit), 10);
    return {
      data: ITEMS.slice((pageNumber - 1) * size, pageNumber * size),
      total: ITEMS.length,
      page: pageNumber,
      limit: size,
      sort: { field: "id", order: "asc" },
      filters: { status: "open" },
    };
  }

  /** One item, on a deprecated route with rate-limit headers; an unknown id is a typed 404. */
  @Get(":id")
  @UseGuards(RateLimitHeadersGuard)
  @Deprecated({ sunset: "2030-01-01T00:00:00Z", link: "/docs/v2" })
  @ResponseMessage("Found")
  @ProblemType(ITEM_NOT_FOUND_TYPE)
  get(@Param("id") id: string): Item {
    const item = ITEMS.find((candidate) => candidate.id === id);
    if (item === undefined) throw notFound(id);
    return item;
  }
}

/** `/feed`: cursor pagination. */
@Controller("feed")
class FeedController {
  /** The first `limit` items and a cursor to the next ones. */
  @Get()
  @CursorPaginated({ links: true })
  list(@Query("limit") limit = "2"): CursorPaginatedResult<Item> {
    const size = Number(limit);
    return {
      data: ITEMS.slice(0, size),
      nextCursor: size < ITEMS.length ? `c${size}` : null,
      previousCursor: null,
      hasMore: size < ITEMS.length,
      limit: size,
    };
  }
}

/** The test API's module; `problemDetails` switches the error format. */
@Module({})
export class ApiModule {
  /** The module with error envelopes, or with problem details. */
  static forRoot(problemDetails: boolean): DynamicModule {
    return {
      module: ApiModule,
      imports: [
        SafeResponseModule.register({
          requestId: true,
          responseTime: true,
          rateLimit: true,
          problemDetails: problemDetails ? { baseUrl: "https://example.com/problems" } : false,
        }),
      ],
      controllers: [ItemsController, FeedController],
      providers: [RateLimitHeadersGuard],
    };
  }
}
