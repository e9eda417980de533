/**
 * The API the browser page fetches: real response bodies built by the
 * library's framework-free safe-response builders, served on 127.0.0.1.
 *
 * TODO(issue 6): serve these from a Nest app with `SafeResponseModule` once
 * `safe_response/nest/mod.ts` exports it (two apps: one with `problemDetails`).
 *
 * @module
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import {
  buildCursorPaginationMeta,
  buildErrorBody,
  buildPaginationMeta,
  buildProblemDetails,
  buildSuccessBody,
  fallbackErrorCode,
  parseRateLimitHeaders,
  PROBLEM_JSON_CONTENT_TYPE,
  resolveDeprecation,
} from "../../safe_response/mod.ts";

/** A running API server. */
export interface Api {
  /** `http://127.0.0.1:PORT`. */
  origin: string;
  /** Stops the server. */
  close(): Promise<void>;
}

interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

const items = [{ id: "a" }, { id: "b" }, { id: "c" }, { id: "d" }, { id: "e" }];
const rateLimitHeaders: Record<string, string> = {
  "X-RateLimit-Limit": "10",
  "X-RateLimit-Remaining": "7",
  "X-RateLimit-Reset": "30",
};
const rateLimit = parseRateLimitHeaders((name) => rateLimitHeaders[name]);

function reply(url: URL): Reply | undefined {
  const target = url.pathname + url.search;
  const common = { requestId: "req-1", timestamp: new Date().toISOString(), path: url.pathname };
  switch (url.pathname) {
    case "/items": { // offset pagination with links, sort, filters, field selection, timing
      const page = Number(url.searchParams.get("page") ?? 1);
      const limit = Number(url.searchParams.get("limit") ?? 2);
      const data = items.slice((page - 1) * limit, page * limit);
      const pagination = buildPaginationMeta({ data, total: items.length, page, limit }, {
        requestTarget: target,
      });
      const meta = {
        pagination,
        sort: { field: "id", order: "asc" as const },
        filters: { status: "open" },
        fields: ["id"],
        responseTime: 1.5,
      };
      return { status: 200, body: buildSuccessBody({ statusCode: 200, data, meta, ...common }) };
    }
    case "/feed": { // cursor pagination
      const result = {
        data: items.slice(0, 2),
        nextCursor: "c2",
        previousCursor: null,
        hasMore: true,
        limit: 2,
      };
      const meta = { pagination: buildCursorPaginationMeta(result, { requestTarget: target }) };
      return {
        status: 200,
        body: buildSuccessBody({ statusCode: 200, data: result.data, meta, ...common }),
      };
    }
    case "/items/a": { // deprecated route, rate-limit headers mirrored
      const deprecation = resolveDeprecation({ sunset: "2030-01-01T00:00:00Z", link: "/docs/v2" });
      return {
        status: 200,
        headers: { ...rateLimitHeaders, ...Object.fromEntries(deprecation.headers) },
        body: buildSuccessBody({
          statusCode: 200,
          code: "OK",
          data: items[0],
          meta: { message: "Found", deprecation: deprecation.meta, rateLimit },
          ...common,
        }),
      };
    }
    case "/items/z": // error envelope
      return {
        status: 404,
        headers: rateLimitHeaders,
        body: buildErrorBody({
          statusCode: 404,
          code: fallbackErrorCode(404),
          message: "Item z not found",
          meta: { rateLimit },
          ...common,
        }),
      };
    case "/problem/items/z": // problem details
      return {
        status: 404,
        headers: { "Content-Type": PROBLEM_JSON_CONTENT_TYPE },
        body: buildProblemDetails({
          status: 404,
          code: fallbackErrorCode(404),
          detail: "Item z not found",
          instance: url.pathname,
          requestId: "req-1",
          meta: { responseTime: 0.5 },
        }),
      };
  }
  return undefined;
}

/** Starts the API on 127.0.0.1 with a free port. */
export function startApi(): Promise<Api> {
  const server = createServer((request, response) => {
    const found = reply(new URL(request.url ?? "/", "http://127.0.0.1"));
    const { status, body, headers } = found ??
      {
        status: 404,
        body: buildErrorBody({ statusCode: 404, code: "NOT_FOUND", message: "No route" }),
      };
    response.writeHead(status, { "Content-Type": "application/json", ...headers });
    response.end(JSON.stringify(body));
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        origin: `http://127.0.0.1:${port}`,
        close: () => new Promise((done) => server.close(() => done())),
      });
    });
  });
}
