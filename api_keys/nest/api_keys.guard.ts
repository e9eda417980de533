/**
 * `ApiKeysGuard`: resolves the client IP and lets the core authorize the
 * request from its headers (`ApiKeysService.authorizeRequest`) against the
 * route's requirements; and `getApiKeyContext`, where it records the result.
 *
 * @module
 */
import { Inject, Injectable, InternalServerErrorException, Logger, Optional } from "@nestjs/common";
import { Reflector } from "@nestjs/core";
import type { ApiKeyHeaderReader } from "../extract_api_key.ts";
import { ApiKeysService } from "../service.ts";
import { isThenable, resolveClientIp, trackedNetwork } from "../ip_allowlist.ts";
import { apiKeyChallenge, ApiKeyError } from "../errors.ts";
import { failureLine } from "../_sinks.ts";
import { serviceLog } from "../_service_hooks.ts";
import { assertKnownFields } from "../../telemetry/_known_fields.ts";
import { bugIdentity, bugReporter, rateLimitHeaders } from "../metering/_limits.ts";
import type { ApiKeyContext } from "../types.ts";
import { defaultApiKeyClientIpResolver } from "./api_keys.client_ip.ts";
import {
  API_KEY_CONTEXT_PROPERTY,
  API_KEYS_CLIENT_IP_RESOLVER,
  API_KEYS_CONTEXT_WRITER,
  API_KEYS_MODULE_OPTIONS,
  type ApiKeyClientIpResolver,
  type ApiKeyContextWriter,
} from "./api_keys.constants.ts";
import { toApiKeyHttpException } from "./api_keys.exception.ts";
import { type RouteRequirements, routeRequirementsOf } from "./_route_requirements.ts";

// deno-lint-ignore ban-types
type Target = Function;

/**
 * The part of Nest's `ExecutionContext` the guard reads; Nest passes its own
 * `ExecutionContext`, which fits.
 */
export interface ApiKeysGuardContext {
  /** Kind of call (`"http"`, `"rpc"`, `"ws"`, `"graphql"`); the guard refuses all but `"http"`. */
  getType?(): string;
  /** HTTP view of the call; `getRequest()` gives the Express or Fastify request. */
  // deno-lint-ignore no-explicit-any
  switchToHttp(): { getRequest(): any; getResponse?(): any };
  /** Route handler about to run. */
  // deno-lint-ignore ban-types
  getHandler(): Function;
  /** Controller class of the handler. */
  // deno-lint-ignore ban-types
  getClass(): Function;
}

/** The part of an Express or Fastify response the guard writes headers with. */
interface HeaderTarget {
  header?(name: string, value: string): unknown;
  setHeader?(name: string, value: string): unknown;
}

/** Sets `fields` on an Express or Fastify response. */
function writeFields(response: HeaderTarget | undefined, fields: [string, string][]): void {
  for (const [name, value] of fields) {
    if (typeof response?.header === "function") response.header(name, value);
    else response?.setHeader?.(name, value);
  }
}

/** Sets the rate-limit fields of `answers` on an Express or Fastify response. */
function writeRateLimitHeaders(
  response: HeaderTarget | undefined,
  answers: Pick<ApiKeyContext, "rateLimitResults" | "creditResult" | "tenantCreditResult">,
  legacy: boolean,
): void {
  // A key without limits or credits: no field to write (its request runs no rate-limit code).
  if (answers.rateLimitResults === undefined && answers.creditResult === undefined) return;
  writeFields(response, rateLimitHeaders(answers, legacy));
}

const writeToRequestProperty: ApiKeyContextWriter = (context, request) => {
  request[API_KEY_CONTEXT_PROPERTY] = context;
};

/** The context the guard verified for each request, whatever the context writer does. */
const contexts = new WeakMap<object, ApiKeyContext>();

/**
 * The context the guard verified for `request` (Express or Fastify request),
 * or `undefined` when the guard did not run or failed. Works with any context writer.
 *
 * @example
 * ```ts
 * import { getApiKeyContext } from "@saferoute/api-kit/api-keys/nest";
 * function tenantOf(request: object): string | undefined {
 *   return getApiKeyContext(request)?.tenantId;
 * }
 * ```
 */
export function getApiKeyContext(request: object): ApiKeyContext | undefined {
  return typeof request === "object" && request !== null ? contexts.get(request) : undefined;
}

/**
 * Header reader over Node's `IncomingMessage` (Express request or Fastify
 * `request.raw`). Every line of a header counts (Node's `headers` keeps only
 * the first `Authorization`), read from `rawHeaders`: scanning that array
 * costs a fraction of building `headersDistinct` (about 1-3 µs per request).
 */
// deno-lint-ignore no-explicit-any
function headerReaderOf(request: any): ApiKeyHeaderReader {
  const message = request.raw ?? request;
  const raw = message.rawHeaders;
  if (Array.isArray(raw)) return (name) => rawHeaderValues(raw, name);
  const headers = message.headersDistinct ?? message.headers ?? {};
  return (name) => headers[name];
}

/** Values of the lower-case header `name` in a `rawHeaders` list (name, value, name, value...). */
function rawHeaderValues(raw: unknown[], name: string): string | string[] | undefined {
  let found: string | string[] | undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const key = raw[i];
    if (typeof key !== "string" || key.length !== name.length || key.toLowerCase() !== name) {
      continue;
    }
    const value = raw[i + 1];
    if (typeof value !== "string") continue;
    if (found === undefined) found = value;
    else if (typeof found === "string") found = [found, value];
    else found.push(value);
  }
  return found;
}

/** `Controller.handler` of the route `context` runs, for log lines. */
function routeName(context: ApiKeysGuardContext): string {
  return `${context.getClass().name}.${context.getHandler().name}`;
}

/**
 * Protects routes with API keys: `ApiKeysService.authorizeRequest` with the
 * client IP and the route's `RequireEnvironment`/`RequireScope`. A client-IP
 * resolver that fails or answers a non-string means "unknown" (keys with an
 * allowlist are refused) and is logged redacted. On success the context goes
 * through the context writer (default `request.apiKey`); on failure it throws
 * `ApiKeyHttpException` (401/403, limits and credits 429, storage failures 503).
 * A context writer that throws or rejects is answered with Nest's generic 500
 * (`InternalServerErrorException`) and logged redacted (the use is counted).
 * Run twice on a request (`APP_GUARD` and `@UseGuards`), it charges it once:
 * the second run only checks the route's requirements (`AuthorizeOptions.request`).
 * A route or controller marked `SkipApiKey()` is let through unchecked, unless a requirement is
 * nearer the route (a method's own under a skipped controller).
 *
 * @example
 * ```ts
 * import { Module } from "@nestjs/common";
 * import { APP_GUARD } from "@nestjs/core";
 * import { InMemoryApiKeyStorage } from "@saferoute/api-kit/api-keys";
 * import { ApiKeysGuard, ApiKeysModule } from "@saferoute/api-kit/api-keys/nest";
 *
 * @Module({
 *   imports: [
 *     ApiKeysModule.forRoot({
 *       peppers: { 1: "a-pepper-of-at-least-thirty-two-bytes" },
 *       storage: new InMemoryApiKeyStorage(),
 *     }),
 *   ],
 *   providers: [{ provide: APP_GUARD, useExisting: ApiKeysGuard }],
 * })
 * class AppModule {}
 * ```
 */
@Injectable()
export class ApiKeysGuard {
  readonly #service: ApiKeysService;
  readonly #reflector: Reflector;
  readonly #writeContext: ApiKeyContextWriter;
  readonly #resolveClientIp: ApiKeyClientIpResolver;
  readonly #routes = new WeakMap<Target, WeakMap<Target, RouteRequirements | undefined>>();
  readonly #logger = new Logger("ApiKeysGuard");
  /** Logs an error line redacted with the service's key layouts. */
  readonly #logError: (line: string) => void;
  readonly #reportBug: (line: string, bug?: string) => void;
  readonly #legacyHeaders: boolean;

  /** Builds the guard; a missing writer or resolver means the default one. */
  constructor(
    @Inject(ApiKeysService) service: ApiKeysService,
    @Inject(Reflector) reflector: Reflector,
    @Optional() @Inject(API_KEYS_CONTEXT_WRITER) contextWriter?: ApiKeyContextWriter | null,
    @Optional() @Inject(API_KEYS_CLIENT_IP_RESOLVER) clientIpResolver?:
      | ApiKeyClientIpResolver
      | null,
    @Optional() @Inject(API_KEYS_MODULE_OPTIONS) moduleOptions?: { xRateLimitHeaders?: boolean },
  ) {
    this.#legacyHeaders = moduleOptions?.xRateLimitHeaders === true;
    this.#service = service;
    this.#logError = serviceLog(service, (line) => this.#logger.error(line));
    this.#reportBug = bugReporter(this.#logError);
    this.#reflector = reflector;
    this.#writeContext = contextWriter ?? writeToRequestProperty;
    this.#resolveClientIp = clientIpResolver ?? defaultApiKeyClientIpResolver;
  }

  /**
   * Authorizes the request; throws `ApiKeyHttpException` when it may not proceed. Outside HTTP
   * (a microservice, WebSocket or GraphQL call) it throws an `Error` naming the context, logged
   * once per route: there, `switchToHttp().getRequest()` is a message payload, not a request.
   */
  async canActivate(context: ApiKeysGuardContext): Promise<boolean> {
    const type = context.getType?.();
    if (type !== undefined && type !== "http") {
      const line = `ApiKeysGuard protects HTTP routes only: refused a call in a "${type}" context`;
      this.#reportBug(`${line} (${routeName(context)})`);
      throw new Error(line);
    }
    const requirements = this.#requirementsOf(context.getHandler(), context.getClass());
    if (requirements === undefined) return true;
    const request = context.switchToHttp().getRequest();
    let apiKey: ApiKeyContext;
    try {
      const resolved = resolveClientIp(
        this.#resolveClientIp,
        [request],
        "clientIpResolver",
        this.#logError,
      );
      // A synchronous resolver (the default) costs no extra await.
      const clientIp = isThenable(resolved) ? await resolved : resolved;
      // The core applies the header rules and reports every failure (onAuthFailed,
      // api_key.auth_failed, metric) itself.
      apiKey = await this.#service.authorizeRequest(headerReaderOf(request), {
        ...requirements,
        clientIp,
        request,
      });
    } catch (error) {
      if (error instanceof ApiKeyError) {
        const response = context.switchToHttp().getResponse?.();
        const challenge = apiKeyChallenge(error.code);
        // A 401 comes before any limit: its one field is the challenge.
        if (challenge !== undefined) writeFields(response, [["WWW-Authenticate", challenge]]);
        else writeRateLimitHeaders(response, error, this.#legacyHeaders);
      } else if (error instanceof TypeError) {
        // A bug (a route naming a policy the key lacks, a resolver's bad policy): answered 500.
        const route = routeName(context);
        this.#reportBug(`${route}: ${error.message}`, `${route}: ${bugIdentity(error)}`);
      }
      throw toApiKeyHttpException(error);
    }
    writeRateLimitHeaders(context.switchToHttp().getResponse?.(), apiKey, this.#legacyHeaders);
    contexts.set(request, apiKey);
    try {
      const written = this.#writeContext(apiKey, request);
      if (isThenable(written)) await written;
    } catch (error) {
      // The request is authorized (its use counted) but cannot reach the handler as written:
      // a 500 with Nest's generic body; logged by the error's name only, once per name.
      contexts.delete(request);
      this.#reportBug(`${failureLine("contextWriter", error)}; answered 500`);
      throw new InternalServerErrorException();
    }
    return true;
  }

  #requirementsOf(handler: Target, controller: Target): RouteRequirements | undefined {
    let byController = this.#routes.get(handler);
    if (byController === undefined) {
      byController = new WeakMap();
      this.#routes.set(handler, byController);
    }
    if (byController.has(controller)) return byController.get(controller);
    const requirements = routeRequirementsOf(this.#reflector, handler, controller);
    byController.set(controller, requirements);
    return requirements;
  }
}

/** Options of `ApiKeysThrottlerTracker.getTracker`. */
export interface ApiKeysThrottlerTrackerOptions {
  /**
   * Leading bits an IPv6 client is counted by, 0 to 128 (default 64, as in
   * `@nestjs/throttler`): a client holds a whole /64 and could rotate its
   * addresses within it.
   */
  ipv6SubnetPrefix?: number;
}

/**
 * `@nestjs/throttler` tracker bound to `ApiKeysModule` (which provides it):
 * `key:<key id>` for a request `ApiKeysGuard` verified (`getApiKeyContext`,
 * so any context writer works), else `ip:<client>` from the module's
 * `clientIpResolver` (the guard's), IPv4-mapped IPv6 read as IPv4 and IPv6
 * grouped by network (`ip:2001:db8:1:2::/64`); `ip:unknown` when the resolver
 * finds no address. Synchronous when the resolver is.
 *
 * @example
 * ```ts
 * import { Module } from "@nestjs/common";
 * import { ThrottlerModule } from "@nestjs/throttler";
 * import { InMemoryApiKeyStorage } from "@saferoute/api-kit/api-keys";
 * import { ApiKeysModule, ApiKeysThrottlerTracker } from "@saferoute/api-kit/api-keys/nest";
 *
 * @Module({
 *   imports: [
 *     ApiKeysModule.forRoot({
 *       peppers: { 1: "a-pepper-of-at-least-thirty-two-bytes" },
 *       storage: new InMemoryApiKeyStorage(),
 *     }),
 *     ThrottlerModule.forRootAsync({
 *       inject: [ApiKeysThrottlerTracker],
 *       useFactory: (tracker: ApiKeysThrottlerTracker) => ({
 *         throttlers: [{ ttl: 60_000, limit: 100 }],
 *         getTracker: tracker.getTracker(),
 *       }),
 *     }),
 *   ],
 * })
 * class AppModule {}
 * ```
 */
@Injectable()
export class ApiKeysThrottlerTracker {
  readonly #resolveClientIp: ApiKeyClientIpResolver;
  readonly #logger = new Logger("ApiKeysThrottlerTracker");
  readonly #logError = (line: string): void => this.#logger.error(line);

  /** Builds the tracker; a missing resolver means the default one. */
  constructor(
    @Optional() @Inject(API_KEYS_CLIENT_IP_RESOLVER) clientIpResolver?:
      | ApiKeyClientIpResolver
      | null,
  ) {
    this.#resolveClientIp = clientIpResolver ?? defaultApiKeyClientIpResolver;
  }

  /**
   * The `getTracker` function (`ThrottlerModule` option, or what a `ThrottlerGuard`
   * subclass's `getTracker(request)` returns). Throws a `TypeError` for an
   * unknown option, or an `ipv6SubnetPrefix` not an integer from 0 to 128.
   */
  getTracker(
    options: ApiKeysThrottlerTrackerOptions = {},
  ): (request: object) => string | Promise<string> {
    assertKnownFields(
      options,
      ["ipv6SubnetPrefix"],
      "ApiKeysThrottlerTracker.getTracker",
      "option",
    );
    const bits = options.ipv6SubnetPrefix ?? 64;
    if (!Number.isInteger(bits) || bits < 0 || bits > 128) {
      throw new TypeError("ipv6SubnetPrefix must be an integer from 0 to 128");
    }
    const tracked = (ip: string | undefined) => `ip:${trackedNetwork(ip, bits) ?? "unknown"}`;
    return (request) => {
      const keyId = getApiKeyContext(request)?.keyId;
      if (typeof keyId === "string" && keyId !== "") return `key:${keyId}`;
      const ip = resolveClientIp(
        this.#resolveClientIp,
        [request],
        "clientIpResolver",
        this.#logError,
      );
      return isThenable(ip) ? ip.then(tracked) : tracked(ip);
    };
  }
}
