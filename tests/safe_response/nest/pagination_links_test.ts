/**
 * The RFC 8288 `Link` header over HTTP, on Express and Fastify: pagination
 * links with `linkHeader` (`true`: header and body links, `"only"`: header
 * without body links, or the module option), `Deprecated({ sunsetLink })`,
 * and a `Link` another middleware set kept in front, never overwritten.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  Controller,
  Get,
  type MiddlewareConsumer,
  Module,
  type NestModule,
  NotFoundException,
} from "@nestjs/common";
import {
  CursorPaginated,
  Deprecated,
  Paginated,
  RawResponse,
  SafeResponseModule,
} from "../../../safe_response/nest/mod.ts";
import { ADAPTERS, boot, getJson } from "./helpers.ts";

const STATUS_LINK = '</status>; rel="service-desc"';

@Controller("links")
class LinksController {
  @Get("offset")
  @Paginated({ links: true, linkHeader: true })
  offset() {
    return { data: [1, 2], total: 6, page: 2, limit: 2 };
  }

  @Get("cursor")
  @CursorPaginated({ links: true, linkHeader: "only" })
  cursor() {
    return { data: ["a"], nextCursor: "b/c", previousCursor: "z", hasMore: true, limit: 1 };
  }

  @Get("plain")
  @Paginated()
  plain() {
    return { data: [], total: 0, page: 1, limit: 5 };
  }

  @Get("deprecated")
  @Deprecated({ link: "https://example.com/v2", sunsetLink: "https://example.com/sunset" })
  @Paginated({ linkHeader: "only" })
  deprecated() {
    return { data: [1], total: 1, page: 1, limit: 1 };
  }

  @Get("raw")
  @RawResponse()
  @Deprecated({ sunsetLink: "https://example.com/sunset" })
  raw() {
    return "raw";
  }

  @Get("error")
  @Deprecated({ sunsetLink: "https://example.com/sunset" })
  error() {
    throw new NotFoundException("gone");
  }
}

/** Sets a `Link` before the route, as other middleware would. */
function otherLinkMiddleware(
  _request: unknown,
  response: { setHeader(name: string, value: string): void },
  next: () => void,
) {
  response.setHeader("Link", STATUS_LINK);
  next();
}

@Module({ imports: [SafeResponseModule.register()], controllers: [LinksController] })
class LinksModule implements NestModule {
  configure(consumer: MiddlewareConsumer) {
    consumer.apply(otherLinkMiddleware).forRoutes("links/*path");
  }
}

@Module({
  imports: [SafeResponseModule.register({ linkHeader: true })],
  controllers: [LinksController],
})
class ModuleWideModule {}

const SUNSET = '<https://example.com/sunset>; rel="sunset"';

for (const adapter of ADAPTERS) {
  describe(`Link header (${adapter})`, () => {
    it('adds pagination links after another middleware\'s Link; "only" drops the body links', async () => {
      const { url, close } = await boot(LinksModule, adapter);
      try {
        const offset = await getJson(url, "/links/offset?page=2&limit=2&q=x");
        assert.equal(
          offset.headers.get("link"),
          `${STATUS_LINK}, </links/offset?page=1&limit=2&q=x>; rel="first", ` +
            '</links/offset?page=1&limit=2&q=x>; rel="prev", ' +
            '</links/offset?page=3&limit=2&q=x>; rel="next", ' +
            '</links/offset?page=3&limit=2&q=x>; rel="last"',
        );
        const pagination = (offset.body.meta as { pagination: { links?: unknown } }).pagination;
        assert.equal(
          (pagination.links as { next: string }).next,
          "/links/offset?page=3&limit=2&q=x",
        );

        const cursor = await getJson(url, "/links/cursor");
        assert.equal(
          cursor.headers.get("link"),
          `${STATUS_LINK}, </links/cursor?limit=1>; rel="first", ` +
            '</links/cursor?cursor=z&limit=1>; rel="prev", ' +
            '</links/cursor?cursor=b%2Fc&limit=1>; rel="next"',
        );
        assert.equal(
          (cursor.body.meta as { pagination: { links?: unknown } }).pagination.links,
          undefined,
        );
        assert.equal((await getJson(url, "/links/plain")).headers.get("link"), STATUS_LINK);
      } finally {
        await close();
      }
    });

    it("sends Deprecated's deprecation and sunset links in the same Link, on every path", async () => {
      const { url, close } = await boot(LinksModule, adapter);
      try {
        const deprecated = await getJson(url, "/links/deprecated");
        assert.equal(
          deprecated.headers.get("link"),
          `${STATUS_LINK}, <https://example.com/v2>; rel="deprecation", ${SUNSET}, ` +
            '</links/deprecated?page=1&limit=1>; rel="first", ' +
            '</links/deprecated?page=1&limit=1>; rel="last"',
        );
        const raw = await fetch(`${url}/links/raw`);
        assert.equal(await raw.text(), "raw");
        assert.equal(raw.headers.get("link"), `${STATUS_LINK}, ${SUNSET}`);
        const error = await getJson(url, "/links/error");
        assert.equal(error.status, 404);
        assert.equal(error.headers.get("link"), `${STATUS_LINK}, ${SUNSET}`);
      } finally {
        await close();
      }
    });

    it("takes linkHeader from the module option", async () => {
      const { url, close } = await boot(ModuleWideModule, adapter);
      try {
        const { headers } = await getJson(url, "/links/plain");
        assert.equal(
          headers.get("link"),
          '</links/plain?page=1&limit=5>; rel="first", </links/plain?page=1&limit=5>; rel="last"',
        );
      } finally {
        await close();
      }
    });
  });
}
