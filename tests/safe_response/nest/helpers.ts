/**
 * Test helpers: boot a real Nest application on Express or Fastify, on
 * 127.0.0.1 with a random port, and capture its log output.
 */
import "reflect-metadata";
import {
  type CanActivate,
  type ExecutionContext,
  type INestApplication,
  Injectable,
  type LoggerService,
  type Type,
} from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import { FastifyAdapter } from "@nestjs/platform-fastify";
import { closeApp } from "../../close_app.ts";

export type AdapterName = "express" | "fastify";

export const ADAPTERS: readonly AdapterName[] = ["express", "fastify"];

export interface LogEntry {
  level: string;
  message: string;
}

/** A logger that keeps what it is given. */
export class CapturingLogger implements LoggerService {
  readonly entries: LogEntry[] = [];
  log(message: unknown): void {
    this.entries.push({ level: "log", message: String(message) });
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.entries.push({ level: "error", message: [message, ...rest].map(String).join(" | ") });
  }
  warn(message: unknown): void {
    this.entries.push({ level: "warn", message: String(message) });
  }
  debug(): void {}
  verbose(): void {}
  /** Entries of `level` whose message contains `text`. */
  find(level: string, text: string): LogEntry[] {
    return this.entries.filter((entry) => entry.level === level && entry.message.includes(text));
  }
}

/** A guard class that throws `deny()` on a request with `x-deny: 1` and lets any other through. */
export function headerDenyGuard(deny: () => Error): Type<CanActivate> {
  @Injectable()
  class HeaderDenyGuard implements CanActivate {
    canActivate(context: ExecutionContext): boolean {
      if (context.switchToHttp().getRequest().headers["x-deny"] === "1") {
        throw deny();
      }
      return true;
    }
  }
  return HeaderDenyGuard;
}

export interface RunningApp {
  app: INestApplication;
  url: string;
  close(): Promise<void>;
}

export interface BootOptions {
  logger?: LoggerService;
  before?: (app: INestApplication) => void;
}

/** Boots `module` on `adapter` and listens on a random local port. */
export async function boot(
  module: Type<unknown>,
  adapter: AdapterName,
  options: BootOptions = {},
): Promise<RunningApp> {
  const logger = options.logger ?? false;
  const app = adapter === "fastify"
    ? await NestFactory.create(module, new FastifyAdapter(), { logger, abortOnError: false })
    : await NestFactory.create(module, { logger, abortOnError: false });
  options.before?.(app);
  try {
    await app.listen(0, "127.0.0.1");
  } catch (error) {
    await app.close();
    throw error;
  }
  const address = app.getHttpServer().address() as { port: number };
  return { app, url: `http://127.0.0.1:${address.port}`, close: () => closeApp(app) };
}

/** Fetches `path` and returns status, headers and parsed JSON body. */
export async function getJson(
  base: string,
  path: string,
  init: RequestInit = {},
): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const response = await fetch(base + path, init);
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: text === "" ? {} : JSON.parse(text),
  };
}

/** The `Link` value {@link otherLinkMiddleware} sets. */
export const STATUS_LINK = '</status>; rel="service-desc"';

/** Sets a `Link` before the route, as other middleware would (kept by the library's headers). */
export function otherLinkMiddleware(
  _request: unknown,
  response: { setHeader(name: string, value: string): void },
  next: () => void,
): void {
  response.setHeader("Link", STATUS_LINK);
  next();
}
