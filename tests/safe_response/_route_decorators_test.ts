import "reflect-metadata";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Get, Post } from "@nestjs/common";
import {
  CursorPaginated,
  Deprecated,
  endpointDecorators,
  Paginated,
  SafeResponse,
} from "../../safe_response/_route_decorators.ts";
import { combine, readRouteOptions } from "../../safe_response/_route_metadata.ts";

describe("endpointDecorators (the composites' runtime half)", () => {
  it("are what the composites (endpointDecorators) set", () => {
    class Routes {
      @Post()
      @combine(...endpointDecorators({
        statusCode: 200,
        pagination: { kind: "offset", maxLimit: 4, defaultLimit: 3, links: true },
        sort: true,
        message: "Listed",
        code: "LISTED",
        problemDetails: true,
      }))
      list() {}

      @Get()
      @combine(...endpointDecorators({
        statusCode: 202,
        pagination: { kind: "cursor", linkHeader: "only" },
        filter: true,
        deprecated: {},
      }))
      feed() {}
    }
    const list = readRouteOptions(Routes, Routes.prototype.list);
    assert.equal(list.raw, false);
    assert.equal(list.statusCode, 200); // not a POST's 201
    assert.deepEqual(list.pagination, {
      kind: "offset",
      maxLimit: 4,
      defaultLimit: 3,
      links: true,
    });
    assert.equal(list.sort, true);
    assert.equal(list.message, "Listed");
    assert.equal(list.successCode, "LISTED");
    assert.equal(list.problemDetails, true);
    const feed = readRouteOptions(Routes, Routes.prototype.feed);
    assert.equal(feed.statusCode, 202);
    assert.equal(feed.pagination?.kind, "cursor");
    assert.equal(feed.linkHeader, "only");
    assert.equal(feed.filter, true);
    assert.equal(feed.problemDetails, false);
    assert.deepEqual(feed.deprecation?.meta, { deprecated: true });
  });
});

describe("route decorators: unknown options", () => {
  const PAGING = "maxLimit, defaultLimit, links, linkHeader";

  it("Paginated, CursorPaginated, Deprecated and SafeResponse refuse an unknown option when called, naming it and the known ones", () => {
    const cases: [() => unknown, RegExp][] = [
      [
        () => Paginated({ maxLimt: 100 } as never),
        new RegExp(`^TypeError: Paginated: unknown option \`maxLimt\` \\(known: ${PAGING}\\)$`),
      ],
      [
        () => CursorPaginated({ defaultLimt: 10 } as never),
        new RegExp(
          `^TypeError: CursorPaginated: unknown option \`defaultLimt\` \\(known: ${PAGING}\\)$`,
        ),
      ],
      [
        () => Deprecated({ sunsett: "2027-01-01" } as never),
        /^TypeError: Deprecated: unknown option `sunsett` \(known: since, sunset, message, link, sunsetLink\)$/,
      ],
      [
        () => SafeResponse({ status: 202 } as never),
        /^TypeError: SafeResponse: unknown option `status` \(known: description, statusCode\)$/,
      ],
    ];
    for (const [call, pattern] of cases) assert.throws(call, pattern);
  });

  it("refuses options kept in a variable, which TypeScript's excess-property check lets through", () => {
    const paging = { links: true, maxLimt: 100 }; // a misspelt maxLimit: no cap on ?limit=
    const sunset = { since: "2026-01-01", sunsett: "2026-06-01" }; // no Sunset header
    assert.throws(() => Paginated(paging), /Paginated: unknown option `maxLimt`/);
    assert.throws(() => Deprecated(sunset), /Deprecated: unknown option `sunsett`/);
  });

  it("accepts every known option", () => {
    const paging = { maxLimit: 50, defaultLimit: 10, links: true, linkHeader: "only" } as const;
    assert.doesNotThrow(() => Paginated(paging));
    assert.doesNotThrow(() => CursorPaginated(paging));
    assert.doesNotThrow(() =>
      Deprecated({
        since: "2026-01-01",
        sunset: "2027-01-01",
        message: "Use v2",
        link: "https://example.com/v2",
        sunsetLink: "https://example.com/policy",
      })
    );
    assert.doesNotThrow(() => SafeResponse({ description: "Created", statusCode: 201 }));
  });
});
