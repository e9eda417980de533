/**
 * The leaked-key routes' bodies on Express. GitHub's secret-scanning batches
 * run to 1 MiB (the partner handler's `maxBodyBytes`); Express parses 100 KB
 * of JSON by default. On Express the partner route gets its own JSON parser
 * with that limit, keeping the raw bytes as Nest's `rawBody: true` does; every
 * other route keeps 100 KB. Fastify's default limit is already 1 MiB. Nest on
 * Express parses no `text/plain`, which the public report takes: the text
 * parser is added (Fastify parses it already).
 *
 * @module
 */
import type { INestApplication } from "@nestjs/common";
import type { NestExpressApplication } from "@nestjs/platform-express";
import express from "express";
import type { DemoAdapter } from "./cli.ts";
import { LEAK_ROUTES } from "./leaks/handlers.ts";

/** The partner handler's default `maxBodyBytes`, 1 MiB. */
const PARTNER_MAX_BODY_BYTES = 1 << 20;

/**
 * Mounts the partner route's parser and the text parser; call it before
 * `app.init()`, so the partner's runs before Nest's own parser, which then
 * finds the body read and skips it.
 */
export function acceptLeakReportBodies(app: INestApplication, adapter: DemoAdapter): void {
  if (adapter !== "express") return;
  (app as NestExpressApplication).useBodyParser("text"); // raw bytes kept too (rawBody: true)
  const parse = express.json({
    limit: PARTNER_MAX_BODY_BYTES,
    verify: (request: { rawBody?: Uint8Array }, _response: unknown, bytes: Uint8Array) => {
      request.rawBody = bytes;
    },
  });
  // A wrapper: Nest skips its own parser when a middleware named `jsonParser` is mounted.
  app.use(
    LEAK_ROUTES.partner,
    (request: unknown, response: unknown, next: unknown) => parse(request, response, next),
  );
}
