/**
 * The admin routes (`./api-keys/admin`) as a Nest controller, on Express or
 * Fastify: the `./api-keys/nest/admin` entry point, apart from
 * `./api-keys/nest` so that apps without the admin routes do not load them.
 *
 * @module
 */
import {
  Controller,
  Delete,
  Get,
  Inject,
  Optional,
  Param,
  Patch,
  Post,
  Req,
  Res,
  SetMetadata,
} from "@nestjs/common";
import { routeRateLimitOf } from "../metering/_limits.ts";
import { API_KEYS_RATE_LIMIT_METADATA } from "./api_keys.constants.ts";
import { createApiKeysAdminHandler } from "../admin/handler.ts";
import { pathOfSegments, routeMethod } from "../admin/_binding.ts";
import type { ApiKeysAdminHandler, ApiKeysAdminOptions } from "../admin/types.ts";
import { ApiKeysService } from "../service.ts";
import type { LeakReportHttpRequest, LeakReportHttpResponse } from "./api_keys.leaks.ts";
import { sendLeakReport } from "./api_keys.leaks.ts";
import { sentBody } from "./_sent_body.ts";

/**
 * What the admin controller reads of an Express or Fastify request; the
 * hooks (`tenantOf`, `canManage`, ...) receive the whole request.
 *
 * @example
 * ```ts
 * import type { AdminHttpRequest } from "@saferoute/api-kit/api-keys/nest/admin";
 * const request: AdminHttpRequest = { method: "GET", headers: {}, query: {} };
 * ```
 */
export interface AdminHttpRequest extends LeakReportHttpRequest {
  /** HTTP method. */
  method: string;
  /** The parsed query. */
  query?: Record<string, unknown>;
}

/**
 * Options of `createApiKeysAdminController`: the admin options (the hooks
 * receive the Express or Fastify request, typed `R`: a passport or session
 * app names its `user` and `session` there) without `service`, which is the
 * injected `ApiKeysService` unless given.
 *
 * @example
 * ```ts
 * import type {
 *   AdminHttpRequest,
 *   ApiKeysAdminControllerOptions,
 * } from "@saferoute/api-kit/api-keys/nest/admin";
 * type SessionRequest = AdminHttpRequest & { user?: { id: string; orgId: string } };
 * const options: ApiKeysAdminControllerOptions<SessionRequest> = {
 *   path: "api-keys",
 *   scopes: ["projects:read"],
 *   tenantOf: (request) => request.user?.orgId,
 *   canManage: () => true,
 *   policy: () => null,
 * };
 * ```
 */
export interface ApiKeysAdminControllerOptions<R extends AdminHttpRequest = AdminHttpRequest>
  extends Omit<ApiKeysAdminOptions<R>, "service"> {
  /** Controller path, such as `api-keys`. */
  path: string;
  /** The service (default: the `ApiKeysService` of `ApiKeysModule`). */
  service?: ApiKeysService;
  /**
   * Class decorators for the controller: guards, scopes, OpenAPI tags. Behind
   * `ApiKeysGuard` the routes count no rate limit and spend no credits of the
   * caller's key; add `RateLimit(...)` here to count them.
   */
  decorators?: readonly ClassDecorator[];
}

/** The admin routes' default: no policy counted, no credit spent. */
const NOT_COUNTED = routeRateLimitOf(false, undefined, "createApiKeysAdminController");

function headerOf(request: AdminHttpRequest): (name: string) => string | undefined {
  return (name) => {
    const value = request.headers[name.toLowerCase()];
    return Array.isArray(value) ? value.join(", ") : value;
  };
}

/**
 * A parsed query parameter as `AdminRequest.query` reads it: a string; one
 * given more than once (a list of strings), its values joined with commas;
 * anything else (a nested object) fails every check, as `[object]`.
 */
function queryValue(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === "string") return value;
  return Array.isArray(value) && value.every((item) => typeof item === "string")
    ? value.join(",")
    : "[object]";
}

/**
 * The body a parser of the framework read as `application/json` (a Fastify request, its `raw`
 * Node's, holds a body only then; on Express the request, a Node stream, has been read to its
 * end): its raw bytes when kept (`rawBody: true`), else the parsed value as JSON text; `null`
 * when none was sent. Another body (unparsed: `undefined` on Express 5, `{}` on Express 4; or
 * parsed as text or a form) is `undefined`, which a route reading a body refuses, never reads as
 * empty.
 */
function bodyOf(request: AdminHttpRequest): Uint8Array | string | null | undefined {
  const { headers, rawBody, body } = request;
  const parsed = body !== undefined &&
    ("raw" in request || (request as { readableEnded?: unknown }).readableEnded === true);
  if (!parsed) return sentBody(request) ? undefined : null;
  const type = headers["content-type"];
  if (typeof type !== "string" || !JSON_BODY_TYPE.test(type)) return undefined;
  return rawBody instanceof Uint8Array ? rawBody : JSON.stringify(body);
}

/**
 * A `Content-Type` every JSON body parser reads: `application/json` with parameters in the
 * strictest grammar among them, body-parser 1's (media-typer 0.3: `; name=value`, spaces only
 * after `;` and around `=`, none before `;`, no empty parameter). One it refuses
 * (`application/json; charset`, a tab) body-parser 1 leaves as `{}`, read or not: refused.
 * (Quotes are escaped: the npm build's import scan reads them in a regular expression as strings.)
 */
const JSON_BODY_TYPE =
  /^application\/json(?:; *[!#$%&\x27*+.^_\x60|~0-9a-z-]+ *= *(?:[!#$%&\x27*+.^_\x60|~0-9a-z-]+|\x22(?:[ !\x23-\x5b\x5d-\x7e\x80-\xff]|\\[\x20-\x7e])*\x22) *)*$/i;

/**
 * A Nest controller serving the admin routes of docs/settings-page.md below
 * `path`. Its answers (errors in the envelope shape) are written through
 * `@Res()`, so the safe-response interceptor leaves them as they are. The
 * handler is built when Nest creates the controller: a bad option throws a
 * `TypeError` at start, and so does a missing service (neither `options.service`
 * nor `ApiKeysModule`).
 *
 * @example
 * ```ts
 * import { Module, UseGuards } from "@nestjs/common";
 * import {
 *   ApiKeysGuard,
 *   ApiKeysModule,
 *   getApiKeyContext,
 *   RequireScope,
 * } from "@saferoute/api-kit/api-keys/nest";
 * import { createApiKeysAdminController } from "@saferoute/api-kit/api-keys/nest/admin";
 * import { InMemoryApiKeyStorage } from "@saferoute/api-kit/api-keys";
 *
 * const AdminKeysController = createApiKeysAdminController({
 *   path: "admin",
 *   decorators: [UseGuards(ApiKeysGuard), RequireScope("keys", "write")],
 *   scopes: ["projects:read", "projects:write"],
 *   tenantOf: (request) => getApiKeyContext(request)?.tenantId,
 *   callerKeyIdOf: (request) => getApiKeyContext(request)?.keyId,
 *   canManage: () => true,
 *   csrf: false, // callers authenticate with an API key header, never a cookie
 * });
 *
 * @Module({
 *   imports: [
 *     ApiKeysModule.forRoot({
 *       peppers: { 1: "a-pepper-of-at-least-thirty-two-bytes" },
 *       storage: new InMemoryApiKeyStorage(),
 *     }),
 *   ],
 *   controllers: [AdminKeysController],
 * })
 * class AppModule {}
 * ```
 */
export function createApiKeysAdminController<R extends AdminHttpRequest = AdminHttpRequest>(
  options: ApiKeysAdminControllerOptions<R>,
): new (service: ApiKeysService) => object {
  if (typeof options !== "object" || options === null || typeof options.path !== "string") {
    throw new TypeError("options.path is required");
  }
  const { path, decorators = [], service: given, ...adminOptions } = options;

  @Controller(path)
  class ApiKeysAdminController {
    readonly #handle: ApiKeysAdminHandler<R>;

    constructor(@Optional() @Inject(ApiKeysService) injected: ApiKeysService | undefined) {
      const service = given ?? injected;
      if (service === undefined) {
        throw new TypeError(
          "createApiKeysAdminController: no ApiKeysService (pass options.service or import ApiKeysModule)",
        );
      }
      this.#handle = createApiKeysAdminHandler({ ...adminOptions, service });
    }

    /**
     * Serves the route of `segments` (`:id` decoded by Express or Fastify);
     * an id holding a `/` is no key's (`pathOfSegments`), as in the Fetch
     * binding. `HEAD` is answered as `GET`; Express and Fastify drop its body.
     */
    async #serve(
      segments: readonly string[],
      request: AdminHttpRequest,
      response: LeakReportHttpResponse,
    ): Promise<void> {
      const path = pathOfSegments(segments);
      const method = routeMethod(request.method);
      const query = request.query ?? {};
      const answer = path === undefined ? undefined : await this.#handle({
        method,
        path,
        query: (name) => queryValue(query[name]),
        headers: headerOf(request),
        body: method === "GET" ? null : bodyOf(request),
      }, request as R);
      sendLeakReport(
        response,
        answer ?? {
          status: 404,
          headers: {
            "content-type": "application/json; charset=utf-8",
            "cache-control": "no-store",
          },
          body: JSON.stringify({
            success: false,
            statusCode: 404,
            error: { code: "api_key_record_not_found", message: "API key record not found" },
          }),
        },
      );
    }

    /** `GET config`. */
    @Get("config")
    config(@Req() request: AdminHttpRequest, @Res() response: LeakReportHttpResponse) {
      return this.#serve(["", "config"], request, response);
    }

    /** `GET keys`. */
    @Get("keys")
    list(@Req() request: AdminHttpRequest, @Res() response: LeakReportHttpResponse) {
      return this.#serve(["", "keys"], request, response);
    }

    /** `POST keys`. */
    @Post("keys")
    create(@Req() request: AdminHttpRequest, @Res() response: LeakReportHttpResponse) {
      return this.#serve(["", "keys"], request, response);
    }

    /** `GET keys/:id`. */
    @Get("keys/:id")
    read(
      @Param("id") id: string,
      @Req() request: AdminHttpRequest,
      @Res() response: LeakReportHttpResponse,
    ) {
      return this.#serve(["", "keys", id], request, response);
    }

    /** `PATCH keys/:id`. */
    @Patch("keys/:id")
    rename(
      @Param("id") id: string,
      @Req() request: AdminHttpRequest,
      @Res() response: LeakReportHttpResponse,
    ) {
      return this.#serve(["", "keys", id], request, response);
    }

    /** `DELETE keys/:id`. */
    @Delete("keys/:id")
    revoke(
      @Param("id") id: string,
      @Req() request: AdminHttpRequest,
      @Res() response: LeakReportHttpResponse,
    ) {
      return this.#serve(["", "keys", id], request, response);
    }

    /** `POST keys/:id/rotate`. */
    @Post("keys/:id/rotate")
    rotate(
      @Param("id") id: string,
      @Req() request: AdminHttpRequest,
      @Res() response: LeakReportHttpResponse,
    ) {
      return this.#serve(["", "keys", id, "rotate"], request, response);
    }

    /** `GET usage` (the usage of a page of keys). */
    @Get("usage")
    usageOfPage(@Req() request: AdminHttpRequest, @Res() response: LeakReportHttpResponse) {
      return this.#serve(["", "usage"], request, response);
    }

    /** `GET keys/:id/usage`. */
    @Get("keys/:id/usage")
    usage(
      @Param("id") id: string,
      @Req() request: AdminHttpRequest,
      @Res() response: LeakReportHttpResponse,
    ) {
      return this.#serve(["", "keys", id, "usage"], request, response);
    }

    /** `GET audit`. */
    @Get("audit")
    audit(@Req() request: AdminHttpRequest, @Res() response: LeakReportHttpResponse) {
      return this.#serve(["", "audit"], request, response);
    }
  }
  // Managing keys spends no rate limit or credit of the caller's key, unless a `RateLimit`
  // among `decorators` says otherwise (applied after, it wins).
  SetMetadata(API_KEYS_RATE_LIMIT_METADATA, NOT_COUNTED)(ApiKeysAdminController);
  for (const decorate of decorators) decorate(ApiKeysAdminController);
  return ApiKeysAdminController;
}
