/**
 * The API the browser page fetches: two real Nest apps running the library's
 * `SafeResponseModule` (see `_api_app.ts`), on 127.0.0.1 with free ports.
 * One answers error envelopes (on Express), the other RFC 9457 problem
 * details (on Fastify), since problem details are a module-wide option.
 * Paths under `/problem/` go to the second app.
 *
 * @module
 */
import "reflect-metadata";
import type { AddressInfo } from "node:net";
import type { INestApplication } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import { ExpressAdapter } from "@nestjs/platform-express";
import { FastifyAdapter } from "@nestjs/platform-fastify";
import { ApiModule } from "./_api_app.ts";
import { closeApp } from "../close_app.ts";

/** The running API servers. */
export interface Api {
  /** `http://127.0.0.1:PORT` of the error-envelope app. */
  origin: string;
  /** `http://127.0.0.1:PORT` of the problem-details app. */
  problemOrigin: string;
  /** The URL serving `path`: `/problem/...` on the problem-details app, the rest on the other. */
  upstream(path: string): string;
  /** Stops both apps. */
  close(): Promise<void>;
}

const PROBLEM_PREFIX = "/problem/";

async function startApp(
  problemDetails: boolean,
): Promise<{ app: INestApplication; origin: string }> {
  const adapter = problemDetails ? new FastifyAdapter() : new ExpressAdapter();
  const app = await NestFactory.create(ApiModule.forRoot(problemDetails), adapter, {
    logger: false,
  });
  try {
    await app.listen(0, "127.0.0.1");
  } catch (error) {
    await app.close();
    throw error;
  }
  const { port } = app.getHttpServer().address() as AddressInfo;
  return { app, origin: `http://127.0.0.1:${port}` };
}

/** Starts both apps. */
export async function startApi(): Promise<Api> {
  const envelope = await startApp(false);
  let problem: Awaited<ReturnType<typeof startApp>>;
  try {
    problem = await startApp(true);
  } catch (error) {
    await envelope.app.close();
    throw error;
  }
  return {
    origin: envelope.origin,
    problemOrigin: problem.origin,
    upstream: (path) =>
      path.startsWith(PROBLEM_PREFIX)
        ? problem.origin + path.slice(PROBLEM_PREFIX.length - 1)
        : envelope.origin + path,
    close: async () => {
      await closeApp(envelope.app);
      await closeApp(problem.app);
    },
  };
}
