/**
 * `./safe-response/nest` without a usable `@nestjs/swagger`: an app is started
 * in a child Deno process whose import map replaces `@nestjs/swagger` with
 * (a) the real package minus its root `DECORATORS` export, as in every
 * swagger 7.x, 8.x and 11.0-11.4.3 (the crash of issue 15), and (b) a module
 * that throws on import, as when the package is not installed. Every runtime
 * decorator and the module must work in both. Deno only: the child process
 * runs the TypeScript sources (the consumer apps cover Node).
 *
 * @module
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";

const root = new URL("../../../", import.meta.url);
const onDeno = typeof (globalThis as { Deno?: unknown }).Deno !== "undefined";

const APP = `
import "reflect-metadata";
import { Controller, Get, Module, Post } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import {
  CursorPaginated, Deprecated, FieldSelection, FilterMeta, Paginated, ProblemType, RawResponse,
  ResponseMessage, SafeResponse, SafeResponseModule, SkipGlobalErrors, SortMeta, SuccessCode,
} from "${new URL("safe_response/nest/mod.ts", root).href}";

@Controller("r")
class RoutesController {
  @Get("old") @Deprecated({ since: "2026-01-01T00:00:00Z" }) @ResponseMessage("Old")
  old() { return { ok: true }; }
  @Post("made") @SuccessCode("MADE") @SafeResponse({ statusCode: 202 })
  made() { return { id: 1 }; }
  @Get("page") @Paginated({ links: true }) @SortMeta() @FilterMeta()
  page() { return { data: [{ id: 1, x: 2 }], total: 1, page: 1, limit: 10,
    sort: { field: "id", order: "asc" }, filters: { x: 2 } }; }
  @Get("feed") @CursorPaginated() @FieldSelection()
  feed() { return { data: [{ id: 1, x: 2 }], nextCursor: null, hasMore: false, limit: 5 }; }
  @Get("raw") @RawResponse()
  raw() { return "plain"; }
  @Get("boom") @ProblemType("https://example.com/p/boom") @SkipGlobalErrors()
  boom() { throw new Error("secret"); }
}

@Module({
  imports: [SafeResponseModule.register({ timestamp: false, problemDetails: true })],
  controllers: [RoutesController],
})
class AppModule {}

const app = await NestFactory.create(AppModule, { logger: false });
await app.listen(0, "127.0.0.1");
const base = await app.getUrl();
const out: Record<string, unknown> = {};
for (const [name, method, path] of [
  ["old", "GET", "/r/old"], ["made", "POST", "/r/made"], ["page", "GET", "/r/page"],
  ["feed", "GET", "/r/feed?fields=id"], ["raw", "GET", "/r/raw"], ["boom", "GET", "/r/boom"],
]) {
  const response = await fetch(base + path, { method });
  const text = await response.text();
  out[name] = { status: response.status, deprecation: response.headers.get("deprecation"),
    body: text.startsWith("{") ? JSON.parse(text) : text };
}
await app.close();
console.log("RESULT " + JSON.stringify(out));
`;

/** Runs the app with `@nestjs/swagger` replaced by `stub`; returns its results by route. */
async function runApp(stub: string): Promise<Record<string, Record<string, unknown>>> {
  const deno = (globalThis as unknown as { Deno: typeof Deno }).Deno;
  const dir = await deno.makeTempDir({ prefix: "without-swagger-" });
  try {
    const config = JSON.parse(await deno.readTextFile(new URL("deno.json", root)));
    const imports = {
      ...config.imports,
      "@noble/hashes/": `${config.imports["@noble/hashes"].replace("npm:", "npm:/")}/`,
      "@nestjs/swagger": `file://${dir}/swagger.ts`,
    };
    await deno.writeTextFile(`${dir}/swagger.ts`, stub);
    await deno.writeTextFile(`${dir}/map.json`, JSON.stringify({ imports }));
    await deno.writeTextFile(`${dir}/app.ts`, APP);
    const output = await new deno.Command(deno.execPath(), {
      args: ["run", "-A", "--config", "deno.json", `--import-map=${dir}/map.json`, `${dir}/app.ts`],
      cwd: new URL(".", root).pathname,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(output.stdout);
    const line = stdout.split("\n").find((text) => text.startsWith("RESULT "));
    assert.ok(line, `the app did not answer:\n${new TextDecoder().decode(output.stderr)}`);
    return JSON.parse(line.slice("RESULT ".length));
  } finally {
    await deno.remove(dir, { recursive: true });
  }
}

function assertAnswers(out: Record<string, Record<string, unknown>>): void {
  assert.equal(out.old.status, 200);
  assert.equal(out.old.deprecation, "@1767225600");
  assert.deepEqual((out.old.body as { meta: unknown }).meta, {
    message: "Old",
    deprecation: { deprecated: true, since: "2026-01-01T00:00:00.000Z" },
  });
  assert.equal(out.made.status, 202);
  assert.deepEqual(out.made.body, {
    success: true,
    statusCode: 202,
    code: "MADE",
    data: { id: 1 },
    path: "/r/made",
  });
  const page = out.page.body as { data: unknown; meta: Record<string, unknown> };
  assert.deepEqual(page.data, [{ id: 1, x: 2 }]);
  assert.deepEqual(page.meta.sort, { field: "id", order: "asc" });
  assert.deepEqual(page.meta.filters, { x: 2 });
  assert.equal(
    (page.meta.pagination as { links: { self: string } }).links.self,
    "/r/page?page=1&limit=10",
  );
  const feed = out.feed.body as { data: unknown; meta: Record<string, unknown> };
  assert.deepEqual(feed.data, [{ id: 1 }]);
  assert.deepEqual(feed.meta.fields, ["id"]);
  assert.equal((feed.meta.pagination as { type: string }).type, "cursor");
  assert.equal(out.raw.body, "plain");
  assert.equal(out.boom.status, 500);
  assert.deepEqual(out.boom.body, {
    type: "https://example.com/p/boom",
    title: "Internal Server Error",
    status: 500,
    detail: "Internal Server Error",
    instance: "/r/boom",
    code: "INTERNAL_SERVER_ERROR",
  });
}

describe("./safe-response/nest without a usable @nestjs/swagger", {
  skip: onDeno ? false : "runs the TypeScript sources under Deno",
}, () => {
  it("an app on a swagger without a root DECORATORS export (7.x, 8.x, 11.0-11.4.3) starts and answers", async () => {
    const version = JSON.parse(await Deno.readTextFile(new URL("deno.json", root)))
      .imports["@nestjs/swagger"];
    assertAnswers(
      await runApp(`export * from "${version}";\nexport const DECORATORS = undefined;\n`),
    );
  });

  it("an app without @nestjs/swagger installed uses every runtime decorator and the module", async () => {
    assertAnswers(await runApp(`throw new Error("Cannot find module '@nestjs/swagger'");\n`));
  });
});
