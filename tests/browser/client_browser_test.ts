/**
 * The client module in a real browser: headless Chromium (`_chromium.ts`) loads
 * a page from 127.0.0.1 that imports the esbuild bundle of client/mod.ts (the
 * demo page's, `demo/page_assets.ts`) as an ES module, fetches real success,
 * error, problem-details and paginated responses from two Nest apps running the
 * library's `SafeResponseModule` (`_api.ts`: error envelopes on Express,
 * problem details on Fastify), and reports every guard's result back. Also
 * measures the bundle (minified + gzipped) and asserts it stays under 2 KB (the
 * browser part is skipped without Chromium, the size check is not).
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import type { Browser, Page } from "playwright-core";
import { bundleClient as bundleDemoClient } from "../../demo/page_assets.ts";
import { type Api, startApi } from "./_api.ts";
import { launchChromium, skipWithoutChromium } from "./_chromium.ts";

const SIZE_LIMIT = 2048;
const GUARDS = [
  "isSuccess",
  "isError",
  "isProblemDetailsResponse",
  "isPaginated",
  "isOffsetPagination",
  "isCursorPagination",
  "isDeprecated",
  "hasResponseTime",
  "hasSort",
  "hasFilters",
  "hasFieldSelection",
  "hasRateLimit",
] as const;
type GuardName = typeof GUARDS[number];

/** The client module as the browser gets it: one minified ES module. */
async function bundleClient(): Promise<Uint8Array> {
  return new TextEncoder().encode(await bundleDemoClient());
}

const PAGE = `<!doctype html>
<meta charset="utf-8">
<title>client guards</title>
<script type="module">
  import * as client from "/client.js";
  globalThis.client = client;
</script>`;

/** Serves the page, the bundle, and `/api/*` proxied to the API apps. */
function startFront(bundle: Uint8Array, api: Api): Promise<{ origin: string; server: Server }> {
  const server = createServer(async (request, response) => {
    const url = request.url ?? "/";
    if (url === "/") {
      response.writeHead(200, { "Content-Type": "text/html; charset=utf-8" }).end(PAGE);
    } else if (url === "/client.js") {
      response.writeHead(200, { "Content-Type": "text/javascript" }).end(bundle);
    } else if (url.startsWith("/api/")) {
      const upstream = await fetch(api.upstream(url.slice(4)));
      const headers: Record<string, string> = {};
      upstream.headers.forEach((value, name) => {
        if (!["content-length", "connection", "keep-alive", "transfer-encoding"].includes(name)) {
          headers[name] = value;
        }
      });
      response.writeHead(upstream.status, headers).end(await upstream.text());
    } else {
      response.writeHead(404).end();
    }
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      resolve({ origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server });
    });
  });
}

/** What the page reports for one fetched route. */
interface Report {
  status: number;
  contentType: string | null;
  /** `X-Request-Id` header and the body's `requestId`. */
  requestIds: [string | null, unknown];
  guards: Record<GuardName, boolean>;
}

/** In the page: fetch each route, run every guard, report. */
function runGuardsInPage(page: Page, paths: string[]): Promise<Record<string, Report>> {
  return page.evaluate(async ({ paths, guards }) => {
    // deno-lint-ignore no-explicit-any
    const client = (globalThis as any).client as Record<string, (value: unknown) => boolean>;
    const reports: Record<string, unknown> = {};
    for (const path of paths) {
      const response = await fetch(`/api${path}`);
      const body = await response.json();
      const meta = body?.meta;
      const argument: Record<string, unknown> = {
        isSuccess: body,
        isError: body,
        isProblemDetailsResponse: body,
        isOffsetPagination: meta?.pagination,
        isCursorPagination: meta?.pagination,
      };
      reports[path] = {
        status: response.status,
        contentType: response.headers.get("content-type"),
        requestIds: [response.headers.get("x-request-id"), body?.requestId],
        guards: Object.fromEntries(
          guards.map((name) => [name, client[name](name in argument ? argument[name] : meta)]),
        ),
      };
    }
    return reports as Record<string, Report>;
  }, { paths, guards: [...GUARDS] });
}

/** Guards that are `true` for a route; every other guard must be `false`. */
const expected: Record<string, GuardName[]> = {
  "/items?page=2&limit=2&fields=id": [
    "isSuccess",
    "isPaginated",
    "isOffsetPagination",
    "hasResponseTime",
    "hasSort",
    "hasFilters",
    "hasFieldSelection",
  ],
  "/feed?limit=2": ["isSuccess", "isPaginated", "isCursorPagination", "hasResponseTime"],
  "/items/a": ["isSuccess", "isDeprecated", "hasRateLimit", "hasResponseTime"],
  "/items/z": ["isError", "isDeprecated", "hasRateLimit", "hasResponseTime"],
  "/no-such-route": ["isError"],
  "/problem/items/z": [
    "isProblemDetailsResponse",
    "isDeprecated",
    "hasRateLimit",
    "hasResponseTime",
  ],
  "/problem/no-such-route": ["isProblemDetailsResponse"],
};

describe("client module size", () => {
  it(`is under ${SIZE_LIMIT} bytes minified and gzipped`, async () => {
    const bundle = await bundleClient();
    const gzipped = gzipSync(bundle, { level: 9 }).length;
    console.log(`client/mod.ts: ${bundle.length} bytes minified, ${gzipped} bytes gzipped`);
    assert.ok(bundle.length > 500, "the bundle holds the guards");
    assert.ok(gzipped < SIZE_LIMIT, `${gzipped} bytes gzipped`);
  });
});

const skip = skipWithoutChromium("browser test");

describe("client module in headless Chromium", { skip }, () => {
  let api: Api;
  let front: { origin: string; server: Server };
  let browser: Browser;
  let page: Page;

  before(async () => {
    api = await startApi();
    front = await startFront(await bundleClient(), api);
    browser = await launchChromium();
    page = await browser.newPage();
    await page.goto(`${front.origin}/`);
    // deno-lint-ignore no-explicit-any
    await page.waitForFunction(() => (globalThis as any).client !== undefined);
  });

  after(async () => {
    await browser?.close();
    await new Promise((done) => front ? front.server.close(done) : done(undefined));
    await api?.close();
  });

  it("loads the bundle as an ES module exporting exactly the guards", async () => {
    const exported = await page.evaluate(() =>
      // deno-lint-ignore no-explicit-any
      Object.entries((globalThis as any).client).map(([name, value]) => `${name}:${typeof value}`)
    );
    assert.deepEqual(exported.sort(), GUARDS.map((name) => `${name}:function`).sort());
    assert.match(await page.evaluate(() => navigator.userAgent), /HeadlessChrome/);
  });

  it("runs every guard on real library responses and reports the expected results", async () => {
    const reports = await runGuardsInPage(page, Object.keys(expected));
    for (const [path, trueGuards] of Object.entries(expected)) {
      const want = Object.fromEntries(GUARDS.map((name) => [name, trueGuards.includes(name)]));
      assert.deepEqual(reports[path].guards, want, path);
    }
    assert.equal(reports["/items?page=2&limit=2&fields=id"].status, 200);
    assert.equal(reports["/items/z"].status, 404);
    assert.equal(reports["/no-such-route"].status, 404);
    assert.equal(reports["/problem/items/z"].status, 404);
    for (const [path, { requestIds: [header, inBody] }] of Object.entries(reports)) {
      assert.match(header ?? "", /^[0-9a-f-]{36}$/, `${path}: X-Request-Id`);
      assert.equal(inBody, header, `${path}: requestId of the body`);
    }
    assert.match(reports["/items/z"].contentType ?? "", /^application\/json/);
    assert.match(reports["/problem/items/z"].contentType ?? "", /^application\/problem\+json/);
  });

  it("returns false, never throws, for non-envelope values in the browser", async () => {
    const results = await page.evaluate((guards) => {
      // deno-lint-ignore no-explicit-any
      const client = (globalThis as any).client as Record<string, (value: unknown) => boolean>;
      const values = [null, undefined, 0, "x", true, [], {}, { success: "true" }, { meta: [] }];
      return guards.flatMap((name) => values.map((value) => client[name](value)));
    }, [...GUARDS]);
    assert.equal(results.length, GUARDS.length * 9);
    assert.deepEqual(results.filter((result) => result !== false), []);
  });
});
