/**
 * `createApiKeyAuthorizer`: the API-key check over a Web `Request`. It
 * resolves the client IP and lets the core authorize the request from its
 * headers (`ApiKeysService.authorizeRequest`) against the route's
 * requirements; `protect` turns failures into responses (`onError`) and
 * records the verified context for `getApiKeyContext`.
 *
 * Over 300 lines because the binding's whole request check (options, client IP,
 * `protect`, the context store) is read in one place, and each public name
 * carries its documentation and example.
 *
 * @module
 */
import { ApiKeyError, ApiKeyStorageError } from "../errors.ts";
import { requiredEnvironmentOf, requiredScopeOf } from "../_route_requirements.ts";
import type { ApiKeysService } from "../service.ts";
import { failureLine } from "../_sinks.ts";
import { rateLimitHeaders, routeRateLimitOf } from "../_limits.ts";
import type {
  ApiKeyContext,
  ApiKeyRateLimitPolicy,
  AuthorizeOptions,
  Environment,
  RequiredScope,
} from "../types.ts";
import { defaultFetchClientIp, type FetchClientIpResolver } from "./api_keys.client_ip.ts";

/**
 * What a route requires of a key (the Nest decorators `RequireScope` and
 * `RequireEnvironment` as plain data). Checked when the authorizer is built.
 *
 * @example
 * ```ts
 * import type { ApiKeyRequirements } from "@saferoute/api-kit/api-keys/fetch";
 * const route: ApiKeyRequirements = {
 *   requiredScope: { resource: "orders", level: "write" },
 *   requiredEnvironment: "live",
 * };
 * ```
 */
export interface ApiKeyRequirements {
  /** Scope the route requires (`write` implies `read`): else 403 `api_key_scope_insufficient`. */
  requiredScope?: RequiredScope;
  /** Environment the route requires: else 403 `api_key_environment_mismatch`. */
  requiredEnvironment?: Environment;
  /** With a service `limiter`: the key's policies this route counts (names), or its own (see Nest's `RateLimit`). */
  rateLimits?: string | readonly string[] | readonly ApiKeyRateLimitPolicy[];
  /** With a service `limiter`: units each request counts (0 only checks). */
  cost?: number;
}

/**
 * Turns an authorization failure into the response sent instead of the
 * handler's. `./safe-response/fetch` offers one that answers the error
 * envelope or problem details (`SafeFetch.errorResponse`).
 *
 * @example
 * ```ts
 * import type { ApiKeyErrorResponder } from "@saferoute/api-kit/api-keys/fetch";
 * const onError: ApiKeyErrorResponder = (error) =>
 *   Response.json({ error: error.code }, { status: error.httpStatus });
 * ```
 */
export type ApiKeyErrorResponder = (
  error: ApiKeyError | ApiKeyStorageError,
  request: Request,
) => Response | Promise<Response>;

/**
 * Options of {@link createApiKeyAuthorizer}: the route requirements (more can
 * be added per route with `require`), how to find the client IP, and how to
 * answer failures.
 *
 * @example
 * ```ts
 * import {
 *   type ApiKeyAuthorizerOptions,
 *   trustedProxyClientIp,
 * } from "@saferoute/api-kit/api-keys/fetch";
 * const options: ApiKeyAuthorizerOptions = {
 *   clientIp: trustedProxyClientIp({ trustedProxies: ["10.0.0.0/8"] }),
 *   requiredEnvironment: "live",
 * };
 * ```
 */
export interface ApiKeyAuthorizerOptions extends ApiKeyRequirements {
  /**
   * How to find the client IP (default `defaultFetchClientIp`: the
   * connection's peer). A throw or rejection means "unknown" (keys with an
   * allowlist are refused, others pass) and is logged (error name only).
   */
  clientIp?: FetchClientIpResolver;
  /**
   * The response `protect` sends when authorization fails (default
   * {@link apiKeyErrorResponse}). A throw or rejection is logged and the
   * default response sent.
   */
  onError?: ApiKeyErrorResponder;
  /** With a service `limiter`: also write `X-RateLimit-*` (the policy with the least remaining). */
  xRateLimitHeaders?: boolean;
  /**
   * Where failures of `clientIp` and `onError` are logged (default
   * `console.error`); its own failure is ignored.
   */
  log?: (line: string) => void;
}

/**
 * Body of the default error response: the code and its status, with the
 * fixed, safe message (the body of `./api-keys/nest`'s `ApiKeyHttpException`).
 *
 * @example
 * ```ts
 * import type { ApiKeyErrorBody } from "./api_keys.authorizer.ts";
 * const body: ApiKeyErrorBody = {
 *   statusCode: 401, code: "api_key_missing", message: "API key is missing",
 * };
 * ```
 */
export interface ApiKeyErrorBody {
  /** HTTP status: 401, 403 or 503. */
  statusCode: number;
  /** Machine-readable code (`api_key_*`, or `api_key_storage_unavailable`). */
  code: string;
  /** Fixed, safe message. */
  message: string;
}

/**
 * The default `onError`: a JSON body `{ statusCode, code, message }` with the
 * error's status (401, 403, or 503 for storage failures).
 *
 * @example
 * ```ts
 * import { ApiKeyError } from "@saferoute/api-kit/api-keys";
 * import { apiKeyErrorResponse } from "@saferoute/api-kit/api-keys/fetch";
 * const response = apiKeyErrorResponse(new ApiKeyError("api_key_missing"));
 * response.status; // 401
 * ```
 */
export function apiKeyErrorResponse(error: ApiKeyError | ApiKeyStorageError): Response {
  const body: ApiKeyErrorBody = {
    statusCode: error.httpStatus,
    code: error.code,
    message: error.message,
  };
  return Response.json(body, { status: error.httpStatus });
}

/**
 * A handler the authorizer protects: the request and whatever the server
 * passes beside it (`Deno.serve`'s info, Hono's context...).
 *
 * @example
 * ```ts
 * import type { FetchHandler } from "@saferoute/api-kit/api-keys/fetch";
 * const hello: FetchHandler<[unknown]> = () => new Response("hello");
 * ```
 */
export type FetchHandler<Args extends unknown[] = unknown[]> = (
  request: Request,
  ...args: Args
) => Response | Promise<Response>;

/**
 * Authorizes requests against one set of requirements; built once by
 * {@link createApiKeyAuthorizer} (or `require`). Call it with the request and
 * the server's per-request `info` (given to the client-IP resolver): it
 * resolves the frozen `ApiKeyContext`, or rejects with `ApiKeyError` (401 or
 * 403) or `ApiKeyStorageError` (503).
 *
 * @example
 * ```ts
 * import { ApiKeysService, InMemoryApiKeyStorage } from "@saferoute/api-kit/api-keys";
 * import { createApiKeyAuthorizer } from "@saferoute/api-kit/api-keys/fetch";
 * const service = new ApiKeysService({
 *   peppers: { 1: "a-pepper-of-at-least-thirty-two-bytes" },
 *   storage: new InMemoryApiKeyStorage(),
 * });
 * const authorize = createApiKeyAuthorizer(service);
 * const readOrders = authorize.require({ requiredScope: { resource: "orders", level: "read" } });
 * Deno.serve(async (request, info) => {
 *   const apiKey = await readOrders(request, info); // throws ApiKeyError
 *   return Response.json({ tenantId: apiKey.tenantId });
 * });
 * ```
 */
export interface ApiKeyAuthorizer {
  /** Authorizes `request`; `info` is what the server passed beside it. */
  (request: Request, info?: unknown): Promise<ApiKeyContext>;
  /** The requirements checked (frozen). */
  readonly requirements: Readonly<ApiKeyRequirements>;
  /**
   * An authorizer with the same options and `requirements` over these ones
   * (a field given here wins, as a method's decorator wins over its class's).
   * Throws a `TypeError` for a bad requirement.
   */
  require(requirements: ApiKeyRequirements): ApiKeyAuthorizer;
  /**
   * Wraps `handler`: authorizes each request first (the first argument after
   * the request is the server's `info`), answers a failure with `onError`,
   * else records the context (`getApiKeyContext(request)`) and calls
   * `handler` with the same arguments (it may declare fewer). Anything other
   * than an API-key or storage failure is rethrown.
   */
  protect<Args extends unknown[]>(
    handler: FetchHandler<Args>,
  ): (request: Request, ...args: [...Args, ...unknown[]]) => Promise<Response>;
}

/** The context `protect` verified for each request. */
const contexts = new WeakMap<Request, ApiKeyContext>();

/**
 * The context an authorizer's `protect` verified for `request`, or
 * `undefined` when it did not run or failed.
 *
 * @example
 * ```ts
 * import { getApiKeyContext } from "@saferoute/api-kit/api-keys/fetch";
 * const tenantOf = (request: Request) => getApiKeyContext(request)?.tenantId;
 * ```
 */
export function getApiKeyContext(request: Request): ApiKeyContext | undefined {
  return contexts.get(request);
}

function isThenable<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | undefined)?.then === "function";
}

/** Checks `given` and returns the frozen requirements over `base`. */
function requirementsOf(
  base: ApiKeyRequirements,
  given: ApiKeyRequirements,
  who: string,
): Readonly<ApiKeyRequirements> {
  if (typeof given !== "object" || given === null) {
    throw new TypeError(`${who}: requirements must be an object`);
  }
  const requirements: ApiKeyRequirements = { ...base };
  if (given.requiredScope !== undefined) {
    const { resource, level } = given.requiredScope;
    requirements.requiredScope = requiredScopeOf(resource, level, `${who}: requiredScope`);
  }
  if (given.requiredEnvironment !== undefined) {
    requirements.requiredEnvironment = requiredEnvironmentOf(
      given.requiredEnvironment,
      `${who}: requiredEnvironment`,
    );
  }
  if (given.rateLimits !== undefined || given.cost !== undefined) {
    Object.assign(requirements, routeRateLimitOf(given.rateLimits, given.cost, who));
  }
  return Object.freeze(requirements);
}

function optionalFunction<T>(value: unknown, name: string): T | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "function") {
    throw new TypeError(`createApiKeyAuthorizer: option \`${name}\` must be a function`);
  }
  return value as T;
}

/**
 * Builds an {@link ApiKeyAuthorizer} over `service` (once, at startup): the
 * header rules of `extractApiKey` (`X-API-Key` or a key-shaped
 * `Authorization: Bearer`), then the key, its IP allowlist against the
 * client IP, the environment and the scope, all by
 * `ApiKeysService.authorizeRequest`, which reports every failure
 * (`onAuthFailed`, `api_key.auth_failed`, the metric) itself. Every option is
 * checked here: a bad one throws a `TypeError` naming it.
 *
 * @example
 * ```ts
 * import { ApiKeysService, InMemoryApiKeyStorage } from "@saferoute/api-kit/api-keys";
 * import { createApiKeyAuthorizer, getApiKeyContext } from "@saferoute/api-kit/api-keys/fetch";
 *
 * const service = new ApiKeysService({
 *   peppers: { 1: "a-pepper-of-at-least-thirty-two-bytes" },
 *   storage: new InMemoryApiKeyStorage(),
 * });
 * const orders = createApiKeyAuthorizer(service, {
 *   requiredScope: { resource: "orders", level: "read" },
 * });
 * // 401/403 answered as { statusCode, code, message }; else the handler runs.
 * Deno.serve(orders.protect((request) =>
 *   Response.json({ tenantId: getApiKeyContext(request)?.tenantId })
 * ));
 * ```
 */
export function createApiKeyAuthorizer(
  service: Pick<ApiKeysService, "authorizeRequest">,
  options: ApiKeyAuthorizerOptions = {},
): ApiKeyAuthorizer {
  if (typeof service?.authorizeRequest !== "function") {
    throw new TypeError("createApiKeyAuthorizer: `service` must be an ApiKeysService");
  }
  if (typeof options !== "object" || options === null) {
    throw new TypeError("createApiKeyAuthorizer: options must be an object");
  }
  const resolveClientIp = optionalFunction<FetchClientIpResolver>(options.clientIp, "clientIp") ??
    defaultFetchClientIp;
  const onError = optionalFunction<ApiKeyErrorResponder>(options.onError, "onError");
  const { xRateLimitHeaders = false } = options;
  if (typeof xRateLimitHeaders !== "boolean") {
    throw new TypeError("createApiKeyAuthorizer: option `xRateLimitHeaders` must be a boolean");
  }
  /** `response` with the rate-limit fields of `results` (a copy when its headers are immutable). */
  const withRateLimit = (response: Response, results: ApiKeyContext["rateLimitResults"]) => {
    const fields = rateLimitHeaders(results, xRateLimitHeaders);
    if (fields.length === 0) return response;
    let answer = response;
    try {
      for (const [name, value] of fields) answer.headers.set(name, value);
    } catch {
      answer = new Response(response.body, response);
      for (const [name, value] of fields) answer.headers.set(name, value);
    }
    return answer;
  };
  const sink = optionalFunction<(line: string) => void>(options.log, "log") ??
    ((line: string) => console.error(line));
  /** Logs `line`; a failing log function is ignored (it must never fail a request). */
  const log = (line: string): void => {
    try {
      sink(line);
    } catch {
      // nothing left to report it to
    }
  };

  /** The resolver's answer; a throw or rejection is logged and means unknown. */
  const clientIpOf = (request: Request, info: unknown) => {
    const unknown = (error: unknown): undefined => {
      log(`${failureLine("clientIp", error)}; client IP treated as unknown`);
      return undefined;
    };
    try {
      const resolved = resolveClientIp(request, info);
      return isThenable(resolved) ? Promise.resolve(resolved).then(undefined, unknown) : resolved;
    } catch (error) {
      return unknown(error);
    }
  };

  /** The failure response; a failing `onError` is logged and the default one sent. */
  const failureResponse = async (
    error: ApiKeyError | ApiKeyStorageError,
    request: Request,
  ): Promise<Response> => {
    if (onError === undefined) return apiKeyErrorResponse(error);
    try {
      const response = await onError(error, request);
      if (response instanceof Response) return response;
      log("api-keys: onError returned no Response; the default response is sent");
    } catch (failure) {
      log(`${failureLine("onError", failure)}; the default response is sent`);
    }
    return apiKeyErrorResponse(error);
  };

  const build = (requirements: Readonly<ApiKeyRequirements>): ApiKeyAuthorizer => {
    const authorize = async (request: Request, info?: unknown): Promise<ApiKeyContext> => {
      const resolved = clientIpOf(request, info);
      // A synchronous resolver (the default) costs no extra await.
      const clientIp = isThenable(resolved) ? await resolved : resolved;
      const authorizeOptions: AuthorizeOptions = { ...requirements, clientIp, request };
      return await service.authorizeRequest(
        (name) => request.headers.get(name),
        authorizeOptions,
      );
    };
    return Object.assign(authorize, {
      requirements,
      require: (more: ApiKeyRequirements) =>
        build(requirementsOf(requirements, more, "ApiKeyAuthorizer.require")),
      protect: <Args extends unknown[]>(handler: FetchHandler<Args>) => {
        if (typeof handler !== "function") {
          throw new TypeError("ApiKeyAuthorizer.protect: `handler` must be a function");
        }
        return async (request: Request, ...args: [...Args, ...unknown[]]): Promise<Response> => {
          let apiKey: ApiKeyContext;
          try {
            apiKey = await authorize(request, args[0]);
          } catch (error) {
            if (error instanceof ApiKeyError || error instanceof ApiKeyStorageError) {
              const response = await failureResponse(error, request);
              return error instanceof ApiKeyError
                ? withRateLimit(response, error.rateLimitResults)
                : response;
            }
            throw error;
          }
          contexts.set(request, apiKey);
          const response = await handler(request, ...args as unknown as Args);
          return withRateLimit(response, apiKey.rateLimitResults);
        };
      },
    });
  };
  return build(requirementsOf({}, options, "createApiKeyAuthorizer"));
}
