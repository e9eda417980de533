/**
 * The leaked-key handlers in a Nest controller, on Express or Fastify:
 * `leakReportFromRequest` reads the raw body Nest keeps with
 * `NestFactory.create(AppModule, { rawBody: true })`, `sendLeakReport` writes
 * the handler's answer through `@Res()`. The `./api-keys/nest/leaks` entry
 * point, apart from `./api-keys/nest`.
 *
 * @module
 */
import type { LeakReportRequest, LeakReportResponse } from "../leaks/types.ts";
import { sentBody } from "./_sent_body.ts";

/** What `leakReportFromRequest` reads of an Express or Fastify request. */
export interface LeakReportHttpRequest {
  /** Node's header object (lower-case names). */
  headers: Record<string, string | string[] | undefined>;
  /** The exact bytes received (`rawBody: true`). */
  rawBody?: Uint8Array;
  /** The parsed body. */
  body?: unknown;
}

/**
 * What `sendLeakReport` writes to: an Express `Response` and a Fastify
 * `FastifyReply` both fit.
 */
export interface LeakReportHttpResponse {
  /** Sets the status. */
  status(code: number): unknown;
  /** Sets one header. */
  header(name: string, value: string): unknown;
  /** Sends the body. */
  send(body: string): unknown;
}

/**
 * The framework-free request of a leaked-key handler, from an Express or
 * Fastify request (`@Req()`). The body is `rawBody` (kept by Nest with
 * `rawBody: true` for the body types it parses: JSON, forms and, on Fastify,
 * text), else a body left as a string, else empty. Throws a `TypeError` when
 * the body was parsed into an object and no raw body was kept (the signature
 * covers the exact bytes, so the app must enable `rawBody`), and when the
 * request sent a body (a non-zero `content-length`, a `transfer-encoding`, or
 * over HTTP/2 a stream the headers did not end) that no parser read, such as `text/plain` on Express without
 * `app.useBodyParser("text")`: Nest answers 500 rather than a report that
 * revokes nothing, and the first such request is logged with `console.warn`.
 *
 * @example
 * ```ts
 * import { Controller, HttpCode, Post, Req, Res } from "@nestjs/common";
 * import {
 *   ApiKeysService,
 *   createSecretScanningPartnerHandler,
 *   githubSecretScanningKeyResolver,
 * } from "@saferoute/api-kit/api-keys";
 * import {
 *   type LeakReportHttpRequest,
 *   leakReportFromRequest,
 *   type LeakReportHttpResponse,
 *   sendLeakReport,
 * } from "@saferoute/api-kit/api-keys/nest/leaks";
 *
 * // main.ts: NestFactory.create(AppModule, { rawBody: true })
 * @Controller("github")
 * class SecretScanningController {
 *   private readonly handle;
 *   constructor(service: ApiKeysService) {
 *     this.handle = createSecretScanningPartnerHandler({
 *       service,
 *       publicKeys: githubSecretScanningKeyResolver(),
 *     });
 *   }
 *
 *   @Post("secret-scanning")
 *   @HttpCode(200)
 *   async report(@Req() req: LeakReportHttpRequest, @Res() res: LeakReportHttpResponse) {
 *     sendLeakReport(res, await this.handle(leakReportFromRequest(req)));
 *   }
 * }
 * ```
 */
export function leakReportFromRequest(request: LeakReportHttpRequest): LeakReportRequest {
  const { rawBody, body, headers } = request;
  let bytes: Uint8Array | string;
  if (rawBody instanceof Uint8Array) bytes = rawBody;
  else if (typeof body === "string") bytes = body;
  else if (body === undefined || body === null) {
    if (sentBody(request)) throw unreadBody();
    bytes = new Uint8Array(0);
  } else {
    throw new TypeError(
      "leakReportFromRequest needs the raw body: NestFactory.create(AppModule, { rawBody: true })",
    );
  }
  return {
    body: bytes,
    headers: (name) => {
      const value = headers[name.toLowerCase()];
      return Array.isArray(value) ? value.join(", ") : value;
    },
  };
}

const UNREAD_BODY = "leakReportFromRequest: the request sent a body no parser read " +
  '(on Express, app.useBodyParser("text") reads text/plain)';
let warnedUnreadBody = false;

/** The error of a body no parser read, logged once per process (it names no key material). */
function unreadBody(): TypeError {
  if (!warnedUnreadBody) {
    warnedUnreadBody = true;
    console.warn(`${UNREAD_BODY}; further ones are not logged`);
  }
  return new TypeError(UNREAD_BODY);
}

/**
 * Writes a leaked-key handler's answer (status, headers, JSON body) to an
 * Express or Fastify response taken with `@Res()`.
 *
 * @example
 * ```ts
 * import { type LeakReportHttpResponse, sendLeakReport } from "@saferoute/api-kit/api-keys/nest/leaks";
 * declare const res: LeakReportHttpResponse;
 * sendLeakReport(res, { status: 202, headers: {}, body: "" });
 * ```
 */
export function sendLeakReport(response: LeakReportHttpResponse, reply: LeakReportResponse): void {
  response.status(reply.status);
  for (const [name, value] of Object.entries(reply.headers)) response.header(name, value);
  response.send(reply.body);
}
