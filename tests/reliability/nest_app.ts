/**
 * A real Nest app for the HTTP parts of the reliability suite (Express or
 * Fastify on 127.0.0.1), and a raw-socket HTTP/1.1 client that sends bytes
 * `fetch` would refuse or normalise.
 */
import "reflect-metadata";
import net from "node:net";
import {
  Controller,
  Get,
  type INestApplication,
  type LoggerService,
  Module,
  Param,
  Query,
  UseGuards,
} from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import { FastifyAdapter } from "@nestjs/platform-fastify";
import type { ApiKeyContext, ApiKeysService } from "../../api_keys/mod.ts";
import { ApiKeysService as ApiKeysServiceToken } from "../../api_keys/service.ts";
import {
  ApiKeysGuard,
  ApiKeysModule,
  type ApiKeysModuleOptions,
  CurrentApiKey,
} from "../../api_keys/nest/mod.ts";
import {
  CursorPaginated,
  Paginated,
  SafeResponseModule,
  type SafeResponseModuleOptions,
} from "../../safe_response/nest/mod.ts";
import { closeApp } from "../close_app.ts";

export type Platform = "express" | "fastify";
export const PLATFORMS: readonly Platform[] = ["express", "fastify"];

/** Values the `/throw/:index` route throws (built per request). */
let thrown: (() => unknown)[] = [];

/** The first value of a query parameter that may repeat. */
function first(value: unknown): string | undefined {
  const one = Array.isArray(value) ? value[0] : value;
  return typeof one === "string" ? one : undefined;
}

/** A positive safe integer from the query, or `fallback`. */
function count(value: unknown, fallback: number): number {
  const n = Number(first(value));
  return Number.isSafeInteger(n) && n >= 1 ? n : fallback;
}

@Controller()
class ProbeController {
  @Get("keyed")
  @UseGuards(ApiKeysGuard)
  keyed(@CurrentApiKey() apiKey: ApiKeyContext) {
    return { tenantId: apiKey.tenantId };
  }

  @Get("throw/:index")
  throwIt(@Param("index") index: string) {
    throw thrown[Number(index)]();
  }

  @Get("items")
  @Paginated({ maxLimit: 50, links: true })
  items(@Query() query: Record<string, unknown>) {
    const limit = count(query.limit, 10);
    return { data: ["a", "b"], total: 1_000, page: count(query.page, 1), limit };
  }

  @Get("feed")
  @CursorPaginated({ maxLimit: 20, links: true })
  feed(@Query() query: Record<string, unknown>) {
    const cursor = first(query.cursor) ?? null;
    return {
      data: ["x"],
      nextCursor: cursor === null ? "n:1" : `${cursor}>`,
      previousCursor: cursor,
      hasMore: true,
      limit: count(query.limit, 10),
    };
  }
}

/** Options of `bootApp`. */
export interface AppOptions {
  apiKeys: ApiKeysModuleOptions;
  safeResponse?: SafeResponseModuleOptions;
  logger?: LoggerService | false;
  thrown?: (() => unknown)[];
}

/** A running app. */
export interface RunningApp {
  app: INestApplication;
  service: ApiKeysService;
  port: number;
  url: string;
  close(): Promise<void>;
}

/** Boots the probe app on `platform`, listening on 127.0.0.1 with a random port. */
export async function bootApp(platform: Platform, options: AppOptions): Promise<RunningApp> {
  thrown = options.thrown ?? [];
  @Module({
    imports: [
      ApiKeysModule.forRoot(options.apiKeys),
      SafeResponseModule.register(options.safeResponse ?? {}),
    ],
    controllers: [ProbeController],
  })
  class AppModule {}
  const settings = { logger: options.logger ?? false, abortOnError: false } as const;
  const app = platform === "express"
    ? await NestFactory.create(AppModule, settings)
    : await NestFactory.create(AppModule, new FastifyAdapter(), settings);
  try {
    await app.listen(0, "127.0.0.1");
  } catch (error) {
    await app.close();
    throw error;
  }
  const { port } = app.getHttpServer().address() as { port: number };
  return {
    app,
    service: app.get(ApiKeysServiceToken),
    port,
    url: `http://127.0.0.1:${port}`,
    close: () => closeApp(app),
  };
}

/** A parsed raw response; `status` 0 when the server closed without answering. */
export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  raw: string;
}

function decodeChunked(body: string): string {
  let out = "";
  let rest = body;
  for (;;) {
    const eol = rest.indexOf("\r\n");
    if (eol === -1) return out;
    const size = parseInt(rest.slice(0, eol), 16);
    if (!(size > 0)) return out;
    out += rest.slice(eol + 2, eol + 2 + size);
    rest = rest.slice(eol + 2 + size + 2);
  }
}

/** Parses the last final (non-1xx) response of `raw`. */
export function parseRawResponse(raw: string): RawResponse {
  let text = raw;
  for (;;) {
    const end = text.indexOf("\r\n\r\n");
    if (end === -1) return { status: 0, headers: {}, body: "", raw };
    const [statusLine, ...lines] = text.slice(0, end).split("\r\n");
    const status = Number(statusLine.split(" ")[1]);
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(":");
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const rest = text.slice(end + 4);
    if (status >= 100 && status < 200 && rest.startsWith("HTTP/")) {
      text = rest;
      continue;
    }
    const body = headers["transfer-encoding"] === "chunked" ? decodeChunked(rest) : rest;
    return { status, headers, body, raw };
  }
}

/**
 * Sends `request` (raw bytes; `Connection: close` expected) and resolves with
 * the parsed response, or `null` when nothing completed within `timeoutMs`
 * (a hang guard, not a timing assertion).
 */
export function rawRequest(
  port: number,
  request: string | Uint8Array,
  timeoutMs = 10_000,
): Promise<RawResponse | null> {
  return new Promise((resolve) => {
    const chunks: Uint8Array[] = [];
    const socket = net.connect(port, "127.0.0.1");
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(null);
    }, timeoutMs);
    socket.on("data", (chunk: Uint8Array) => chunks.push(chunk));
    socket.on("error", () => {}); // a reset after the response is fine; close follows
    socket.on("close", () => {
      clearTimeout(timer);
      const all = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
      let at = 0;
      for (const chunk of chunks) {
        all.set(chunk, at);
        at += chunk.length;
      }
      resolve(parseRawResponse(new TextDecoder("latin1").decode(all)));
    });
    socket.write(request);
  });
}

/** A GET request with `headers` (each `[name, value]`, sent verbatim). */
export function getRequest(target: string, headers: [string, string][] = []): string {
  const lines = headers.map(([name, value]) => `${name}: ${value}\r\n`).join("");
  return `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n${lines}Connection: close\r\n\r\n`;
}

/** Whether `body` is a well-formed error envelope or problem-details body for `status`. */
export function errorBodyProblems(status: number, contentType: string, body: string): string[] {
  const problems: string[] = [];
  if (!(Number.isInteger(status) && status >= 400 && status <= 599)) {
    problems.push(`status ${status} is not an error status`);
  }
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(body);
  } catch {
    return [...problems, `body is not JSON: ${body.slice(0, 80)}`];
  }
  if (contentType.startsWith("application/problem+json")) {
    for (const field of ["type", "title", "detail", "instance"]) {
      if (typeof parsed[field] !== "string") problems.push(`problem ${field} is not a string`);
    }
    if (parsed.status !== status) problems.push(`problem status ${parsed.status} != ${status}`);
    return problems;
  }
  if (!contentType.startsWith("application/json")) problems.push(`content-type ${contentType}`);
  const error = parsed.error as Record<string, unknown> | undefined;
  if (parsed.success !== false) problems.push("success is not false");
  if (parsed.statusCode !== status) problems.push(`statusCode ${parsed.statusCode} != ${status}`);
  if (typeof error?.code !== "string" || error.code === "") problems.push("error.code");
  if (typeof error?.message !== "string") problems.push("error.message");
  return problems;
}
