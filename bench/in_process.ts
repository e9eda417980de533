/**
 * Benchmark 2: the library's own per-request work, in process. The
 * interceptor, the exception filter and the guard are invoked directly with a
 * prepared execution context and call handler, each against a no-op
 * counterpart invoked the same way, in alternating rounds. The difference is
 * set against the CPU cost of one request to a bare Nest app (Express, then
 * Fastify) measured in the same run: the bare server in a child process under
 * a fixed local load, CPU time from `process.cpuUsage()` per response.
 *
 * Also the "shortest legal path" experiment: an envelope interceptor reduced
 * to one `map` step (and a hand-rolled observable) against ours.
 *
 * Run: `deno run -A bench/in_process.ts [--quick]`.
 *
 * @module
 */
import "reflect-metadata";
import { type CallHandler, NotFoundException } from "@nestjs/common";
import { ClsService } from "nestjs-cls";
import { map, Observable, of } from "rxjs";
import { ApiKeysGuard } from "../api_keys/nest/mod.ts";
import { ApplicationConfig, HttpAdapterHost, Reflector } from "@nestjs/core";
import { Responder } from "../safe_response/responder.ts";
import { SafeResponseFilter } from "../safe_response/nest/safe_response.filter.ts";
import { SafeResponseInterceptor } from "../safe_response/nest/_safe_response.interceptor.ts";
import {
  BENCH_PATH,
  createBenchApp,
  ITEM,
  ItemsController,
  MessageItemsController,
  NoopGuard,
  NoopInterceptor,
} from "./http/apps.ts";
import {
  alternate,
  type Case,
  fmt,
  printTable,
  QUICK,
  runtimeName,
  TIMING,
} from "./lib/harness.ts";
import { bareCpuPerRequest, describeBare, guardServices, OwnCostTable } from "./lib/own_cost.ts";

type Bag = Record<string, unknown>;

/** An Express-like response: status, header get/set. */
class FakeResponse {
  statusCode = 200;
  readonly #headers = new Map<string, unknown>();
  header(name: string, value: string): this {
    this.#headers.set(name.toLowerCase(), value);
    return this;
  }
  setHeader(name: string, value: string): this {
    return this.header(name, value);
  }
  getHeader(name: string): unknown {
    return this.#headers.get(name.toLowerCase());
  }
}

// deno-lint-ignore ban-types
type Fn = Function;

/** The execution context Nest builds for an HTTP request (`ExecutionContextHost`'s surface). */
class Context {
  constructor(readonly request: Bag, readonly response: FakeResponse, readonly controller: Fn) {}
  getType(): string {
    return "http";
  }
  getClass(): Fn {
    return this.controller;
  }
  getHandler(): Fn {
    return (this.controller as { prototype: { get: Fn } }).prototype.get;
  }
  getArgs(): unknown[] {
    return [this.request, this.response];
  }
  switchToHttp() {
    return {
      getRequest: () => this.request,
      getResponse: () => this.response,
      getNext: () => undefined,
    };
  }
}

const request = (extra: Bag = {}): Bag => ({
  method: "GET",
  url: BENCH_PATH,
  originalUrl: BENCH_PATH,
  query: { fields: "id,name,price" },
  headers: { host: "127.0.0.1", accept: "application/json", "x-trace-id": "trace-1" },
  ...extra,
});

/** Response of a request that went through the throttler (its headers set). */
function throttledResponse(): FakeResponse {
  const response = new FakeResponse();
  response.header("X-RateLimit-Limit", "1000000000");
  response.header("X-RateLimit-Remaining", "999999999");
  response.header("X-RateLimit-Reset", "60");
  return response;
}

const handler: CallHandler = { handle: () => of(ITEM) };

/** Subscribes to `stream` and returns its (synchronous) value. */
function take(stream: Observable<unknown>): unknown {
  let value: unknown;
  stream.subscribe((v) => (value = v));
  return value;
}

/** The minimal envelope: one rxjs `map`, a fixed plan. */
function minimalMap(next: CallHandler): Observable<unknown> {
  return next.handle().pipe(map((data) => ({ success: true, statusCode: 200, data })));
}

/** The minimal envelope as a hand-rolled observable (no operator machinery). */
function minimalObservable(next: CallHandler): Observable<unknown> {
  const source = next.handle();
  return new Observable((subscriber) =>
    source.subscribe({
      next: (data) => subscriber.next({ success: true, statusCode: 200, data }),
      error: (error) => subscriber.error(error),
      complete: () => subscriber.complete(),
    })
  );
}

/**
 * The app's HTTP adapter with the calls that write to a socket replaced:
 * `reply` and `end` keep the body (`reply` serialises it when `serialize`).
 */
function fakeAdapterHost(real: object, serialize: boolean) {
  let sink: unknown;
  const httpAdapter = Object.assign(Object.create(real), {
    isHeadersSent: () => false,
    status: () => {},
    end: (_response: unknown, body?: unknown) => {
      sink = body;
    },
    setHeader: (response: FakeResponse, name: string, value: string) =>
      response.header(name, value),
    reply: (_response: unknown, body: unknown) => {
      sink = serialize ? JSON.stringify(body) : body;
    },
  });
  return { host: { httpAdapter } as never, last: () => sink };
}

/** A filter doing what Nest's default one does: a small body through the adapter. */
function noopFilter(adapter: ReturnType<typeof fakeAdapterHost>) {
  const { httpAdapter } = adapter.host as unknown as { httpAdapter: { reply: Fn } };
  return (exception: NotFoundException, context: Context) => {
    const status = exception.getStatus();
    httpAdapter.reply(context.response, { statusCode: status, message: exception.message }, status);
  };
}

async function main() {
  const began = performance.now();
  const bare = {
    express: await bareCpuPerRequest("express"),
    fastify: await bareCpuPerRequest("fastify"),
  };

  const defaults = await createBenchApp("express", "envelope");
  await defaults.init();
  const all = await createBenchApp("express", "envelope-all");
  await all.init();
  const runtime = defaults.get(Responder, { strict: false });
  const allRuntime = all.get(Responder, { strict: false });
  const cls = all.get(ClsService);
  cls.enter();
  cls.set("traceId", "trace-1");

  const interceptor = new SafeResponseInterceptor(runtime, defaults.get(ApplicationConfig));
  const allInterceptor = new SafeResponseInterceptor(allRuntime, all.get(ApplicationConfig));
  const noop = new NoopInterceptor();
  const plainContext = () => new Context(request(), new FakeResponse(), ItemsController);
  const allContext = () =>
    new Context(request({ i18nLang: "en" }), throttledResponse(), MessageItemsController);
  const intercept = (
    run: (context: Context) => Observable<unknown>,
    context: () => Context,
    serialize = false,
  ) =>
  () => {
    const value = take(run(context()));
    return serialize ? JSON.stringify(value) : value;
  };
  const interceptorCases: Case[] = [
    {
      name: "no-op interceptor",
      sync: true,
      op: intercept((c) => noop.intercept(c, handler), plainContext),
    },
    {
      name: "envelope, default options",
      sync: true,
      op: intercept((c) => interceptor.intercept(c as never, handler), plainContext),
    },
    {
      name: "no-op interceptor (all-options request)",
      sync: true,
      op: intercept((c) => noop.intercept(c, handler), allContext),
    },
    {
      name: "envelope, all options on",
      sync: true,
      op: intercept((c) => allInterceptor.intercept(c as never, handler), allContext),
    },
    {
      name: "no-op + JSON.stringify",
      sync: true,
      op: intercept((c) => noop.intercept(c, handler), plainContext, true),
    },
    {
      name: "envelope default + JSON.stringify",
      sync: true,
      op: intercept((c) => interceptor.intercept(c as never, handler), plainContext, true),
    },
    {
      name: "shortest path: one rxjs map",
      sync: true,
      op: intercept(() => minimalMap(handler), plainContext),
    },
    {
      name: "shortest path: hand-rolled observable",
      sync: true,
      op: intercept(() => minimalObservable(handler), plainContext),
    },
  ];

  const exception = new NotFoundException();
  const realAdapter = defaults.get(HttpAdapterHost).httpAdapter;
  const filterHost = fakeAdapterHost(realAdapter, false);
  const filterHostJson = fakeAdapterHost(realAdapter, true);
  const filter = new SafeResponseFilter(runtime, filterHost.host);
  const allFilter = new SafeResponseFilter(allRuntime, filterHost.host);
  const filterJson = new SafeResponseFilter(runtime, filterHostJson.host);
  const nestLike = noopFilter(filterHost);
  const nestLikeJson = noopFilter(filterHostJson);
  const filterCases: Case[] = [
    {
      name: "no-op filter (Nest-like body)",
      sync: true,
      op: () => nestLike(exception, plainContext()),
    },
    {
      name: "filter, default options",
      sync: true,
      op: () => filter.catch(exception, plainContext() as never),
    },
    {
      name: "no-op filter + JSON.stringify (all-options request)",
      sync: true,
      op: () => nestLikeJson(exception, allContext()),
    },
    {
      name: "filter, all options on",
      sync: true,
      op: () => allFilter.catch(exception, allContext() as never),
    },
    {
      name: "no-op filter + JSON.stringify",
      sync: true,
      op: () => nestLikeJson(exception, plainContext()),
    },
    {
      name: "filter default + JSON.stringify",
      sync: true,
      op: () => filterJson.catch(exception, plainContext() as never),
    },
  ];

  const { warm: warmService, cold: coldService, key } = await guardServices();
  const reflector = new Reflector();
  const warmGuard = new ApiKeysGuard(warmService, reflector);
  const coldGuard = new ApiKeysGuard(coldService, reflector);
  const noopGuard = new NoopGuard();
  const keyContext = () =>
    new Context(
      request({ ip: "127.0.0.1", headers: { host: "127.0.0.1", "x-api-key": key } }),
      new FakeResponse(),
      ItemsController,
    );
  const guardCases: Case[] = [
    { name: "no-op guard (awaited)", op: async () => await noopGuard.canActivate() },
    { name: "ApiKeysGuard, warm cache", op: () => warmGuard.canActivate(keyContext()) },
    { name: "no-op guard (awaited) ", op: async () => await noopGuard.canActivate() },
    { name: "ApiKeysGuard, cold (full verify)", op: () => coldGuard.canActivate(keyContext()) },
  ];

  const [ti, tf, tg] = [
    await alternate(interceptorCases),
    await alternate(filterCases),
    await alternate(guardCases),
  ];
  await defaults.close();
  await all.close();

  const table = new OwnCostTable([bare.express, bare.fastify]);
  table.add("interceptor", interceptorCases, ti, 1, 0, 3);
  table.add("interceptor", interceptorCases, ti, 3, 2, 10);
  table.add("interceptor", interceptorCases, ti, 5, 4);
  table.add("experiment", interceptorCases, ti, 6, 0);
  table.add("experiment", interceptorCases, ti, 7, 0);
  table.add("filter", filterCases, tf, 1, 0, 3);
  table.add("filter", filterCases, tf, 3, 2, 10);
  table.add("filter", filterCases, tf, 5, 4);
  table.add("guard", guardCases, tg, 1, 0, 5);
  table.add("guard", guardCases, tg, 3, 2);

  printTable(
    `Benchmark 2 — in-process cost per request on ${runtimeName()}: medians of ${TIMING.rounds} ` +
      `alternating rounds` + (QUICK ? " (quick)" : ""),
    [
      "part",
      "case",
      "µs",
      "floor",
      "floor µs",
      "own µs",
      "% bare Express",
      "% bare Fastify",
      "target",
      "",
    ],
    table.rows,
  );
  console.log(
    `\nbare request CPU (server process, 16 connections): Express ${describeBare(bare.express)}, ` +
      `Fastify ${describeBare(bare.fastify)}`,
  );
  console.log(
    "own µs = case - floor; the no-op counterparts get the same fresh request/response/context per call.",
  );
  console.log(
    table.missed.length === 0
      ? "all in-process targets met"
      : `targets missed: ${table.missed.join("; ")}`,
  );
  console.log(`finished in ${fmt((performance.now() - began) / 1000, 1)} s`);
}

await main();
