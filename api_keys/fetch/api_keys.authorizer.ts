/**
 * `createApiKeyAuthorizer`: the API-key check over a Web `Request`. It
 * resolves the client IP and lets the core authorize the request from its
 * headers (`ApiKeysService.authorizeRequest`) against the route's
 * requirements; `protect` turns failures into responses (`onError`) and
 * records the verified context for `getApiKeyContext`.
 *
 * @module
 */
import { apiKeyChallenge, ApiKeyError, ApiKeyStorageError } from "../errors.ts";
import { requiredEnvironmentOf, requiredScopeOf } from "../_route_requirements.ts";
import type { ApiKeysService } from "../service.ts";
import { assertKnownFields } from "../../telemetry/_known_fields.ts";
import { failureLine } from "../_sinks.ts";
import { serviceLog } from "../_service_hooks.ts";
import { callDetached } from "../../telemetry/_detached.ts";
import { isThenable, resolveClientIp } from "../ip_allowlist.ts";
import {
  assertChargedRoute,
  bugIdentity,
  bugReporter,
  rateLimitHeaders,
  routeRateLimitOf,
} from "../metering/_limits.ts";
import type {
  ApiKeyContext,
  ApiKeyRateLimitPolicy,
  AuthorizeOptions,
  Environment,
  RequiredScope,
} from "../types.ts";
import { defaultFetchClientIp, type FetchClientIpResolver } from "./api_keys.client_ip.ts";
import { fetchRequestTarget } from "../../telemetry/_fetch_target.ts";

/**
 * What a route requires of a key (the Nest decorators `RequireScope` and
 * `RequireEnvironment` as plain data). Checked when the authorizer is built.
 */
export interface ApiKeyRequirements {
  /** Scope the route requires (`write` implies `read`): else 403 `api_key_scope_insufficient`. */
  requiredScope?: RequiredScope;
  /** Environment the route requires: else 403 `api_key_environment_mismatch`. */
  requiredEnvironment?: Environment;
  /**
   * With a service `limiter`: the key's policies this route counts (names), or its own, or
   * `false` to count and spend nothing (see Nest's `RateLimit`).
   */
  rateLimits?: string | readonly string[] | readonly ApiKeyRateLimitPolicy[] | false;
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
 */
export interface ApiKeyAuthorizerOptions extends ApiKeyRequirements {
  /**
   * How to find the client IP (default `defaultFetchClientIp`: the
   * connection's peer). A throw, rejection or non-string answer means "unknown" (keys with an
   * allowlist are refused, others pass) and is logged (error name only).
   */
  clientIp?: FetchClientIpResolver;
  /**
   * The response `protect` sends when authorization fails (default
   * {@link apiKeyErrorResponse}). A throw or rejection is logged and the
   * default response sent. A given one is also called with a bug the check
   * throws (any value): its answer is sent when of status 500 or more, else
   * the bug is rethrown.
   */
  onError?: ApiKeyErrorResponder;
  /** With a service `limiter`: also write `X-RateLimit-*` (the policy with the least remaining; on a 429 the refusing one with the longest wait). */
  xRateLimitHeaders?: boolean;
  /**
   * Where failures of `clientIp` and `onError`, and a route's bug, are logged
   * (default `console.error`), keys of the service's layouts redacted
   * (`legacyKeyLayouts` too); its own failure, a throw or a rejected promise,
   * is ignored.
   */
  log?: (line: string) => void;
}

/**
 * Body of the default error response: the code and its status, with the
 * fixed, safe message (the body of `./api-keys/nest`'s `ApiKeyHttpException`).
 */
export interface ApiKeyErrorBody {
  /** HTTP status: 401, 403 or 503. */
  statusCode: number;
  /** Machine-readable code (`api_key_*`, or `api_key_storage_unavailable`). */
  code: string;
  /** Fixed, safe message. */
  message: string;
  /** `api_key_usage_exceeded`: the refusing balance, the key's own or its tenant's shared pool. */
  details?: ApiKeyError["details"];
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
  if (error instanceof ApiKeyError && error.details !== undefined) body.details = error.details;
  const challenge = apiKeyChallenge(error.code);
  return Response.json(body, {
    status: error.httpStatus,
    headers: challenge === undefined ? undefined : { "WWW-Authenticate": challenge },
  });
}

/**
 * A handler the authorizer protects: the request and whatever the server
 * passes beside it (`Deno.serve`'s info, Hono's context...).
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
   * than an API-key or storage failure (a `TypeError`, a bug such as a route
   * naming a policy the key lacks, logged first with the method and path) is
   * answered by the given `onError` when it answers a status of 500 or more
   * (`SafeFetch.errorResponse`), else rethrown. A 101 (a WebSocket upgrade)
   * is returned untouched; on other answers the key's rate-limit fields are
   * added but for a family the answer has (the handler's own limiter's).
   * Every wrapped handler counts the key's rate limits and spends its
   * credits unless these requirements say `rateLimits: false` (the admin
   * routes of `createApiKeysAdminFetchHandler`: `require({ rateLimits: false })`). Nested
   * in another `protect` of the same service asking the same charge, a request is
   * charged once, by the outer one; the inner checks only its scope, environment
   * and IP allowlist. An inner one asking another charge is charged on its own.
   */
  protect<Args extends unknown[]>(
    handler: FetchHandler<Args>,
  ): (request: Request, ...args: [...Args, ...unknown[]]) => Promise<Response>;
}

/** The path of `request` as sent (`?` and what follows left out; a Host never moves into it). */
function pathOf(request: Request): string {
  const target = fetchRequestTarget(request);
  if (target === undefined) return "?";
  const query = target.indexOf("?");
  return query === -1 ? target : target.slice(0, query);
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

/** The rate-limit fields `protect` computed for each request (answer or 429). */
const rateLimitFields = new WeakMap<Request, [string, string][]>();

/**
 * The rate-limit fields (`RateLimit-Policy`, `RateLimit`, on a denial
 * `Retry-After`, with `xRateLimitHeaders` `X-RateLimit-*`) `protect` adds to
 * the answer of `request`; empty when no limit applied. Known before the
 * handler or `onError` runs: the `responseHeaders` option of `createSafeFetch`
 * takes it, so `meta.rateLimit` shows them.
 *
 * @example
 * ```ts
 * import { getRateLimitHeaders } from "@saferoute/api-kit/api-keys/fetch";
 * import { createSafeFetch } from "@saferoute/api-kit/safe-response/fetch";
 * const safe = createSafeFetch({ rateLimit: { standard: true }, responseHeaders: getRateLimitHeaders });
 * ```
 */
export function getRateLimitHeaders(request: Request): [string, string][] {
  return [...rateLimitFields.get(request) ?? []];
}

/**
 * The family of a rate-limit field: a handler's response holding one of a family keeps its own,
 * none of the key's (as Nest's throttler, a later guard, replaces the key's `X-RateLimit-*`).
 */
function familyOf(name: string): string {
  const lower = name.toLowerCase();
  return lower.startsWith("x-ratelimit-")
    ? "x-ratelimit"
    : lower.startsWith("ratelimit")
    ? "ratelimit"
    : lower;
}

/** `fields` without the families `headers` already has a field of. */
function withoutOwnFamilies(fields: [string, string][], headers: Headers): [string, string][] {
  const owned = new Set(
    fields.filter(([name]) => headers.has(name)).map(([name]) => familyOf(name)),
  );
  return owned.size === 0 ? fields : fields.filter(([name]) => !owned.has(familyOf(name)));
}

/** Every key of `ApiKeyRequirements` (an unknown one is refused: it would leave the route open). */
const REQUIREMENTS: readonly string[] = Object.keys(
  {
    requiredScope: true,
    requiredEnvironment: true,
    rateLimits: true,
    cost: true,
  } satisfies Record<keyof ApiKeyRequirements, true>,
);

/** Every option of `createApiKeyAuthorizer`: the requirements and its own. */
const AUTHORIZER_OPTIONS: readonly string[] = [
  ...REQUIREMENTS,
  ...Object.keys(
    {
      clientIp: true,
      onError: true,
      xRateLimitHeaders: true,
      log: true,
    } satisfies Record<Exclude<keyof ApiKeyAuthorizerOptions, keyof ApiKeyRequirements>, true>,
  ),
];

/**
 * Checks `given` (its keys against `known`) and returns the frozen requirements over `base`.
 */
function requirementsOf(
  base: ApiKeyRequirements,
  given: ApiKeyRequirements,
  who: string,
  known: readonly string[] = REQUIREMENTS,
): Readonly<ApiKeyRequirements> {
  if (typeof given !== "object" || given === null) {
    throw new TypeError(`${who}: requirements must be an object`);
  }
  assertKnownFields(given, known, who, "option");
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
  // A route's cost over the authorizer's `rateLimits: false` (or the reverse) is that pair too.
  assertChargedRoute(requirements, who);
  return Object.freeze(requirements);
}

type FunctionOptions = Required<Pick<ApiKeyAuthorizerOptions, "clientIp" | "onError" | "log">>;

const FUNCTION_DEFAULTS: FunctionOptions = {
  clientIp: defaultFetchClientIp,
  onError: apiKeyErrorResponse,
  log: (line) => console.error(line),
};

/** The function options merged over their defaults; throws a `TypeError` for a non-function. */
function functionOptions(options: ApiKeyAuthorizerOptions): FunctionOptions {
  const merged = { ...FUNCTION_DEFAULTS };
  for (const name of Object.keys(merged) as (keyof FunctionOptions)[]) {
    const value = options[name];
    if (value === undefined) continue;
    if (typeof value !== "function") {
      throw new TypeError(`createApiKeyAuthorizer: option \`${name}\` must be a function`);
    }
    merged[name] = value as never;
  }
  return merged;
}

/**
 * Builds an {@link ApiKeyAuthorizer} over `service` (once, at startup); each
 * request goes through `ApiKeysService.authorizeRequest` with its client IP.
 * A bad option throws a `TypeError` naming it.
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
  const { clientIp: clientIpResolver, onError, log: sink } = functionOptions(options);
  const { xRateLimitHeaders = false } = options;
  if (typeof xRateLimitHeaders !== "boolean") {
    throw new TypeError("createApiKeyAuthorizer: option `xRateLimitHeaders` must be a boolean");
  }
  /** Records the rate-limit fields of `answers` for `request` (`getRateLimitHeaders`). */
  const recordRateLimit = (
    request: Request,
    answers: Pick<ApiKeyContext, "rateLimitResults" | "creditResult" | "tenantCreditResult">,
  ) => {
    const fields = rateLimitHeaders(answers, xRateLimitHeaders);
    if (fields.length > 0) rateLimitFields.set(request, fields);
    return fields;
  };
  /** `response` with `fields` (a copy when its headers are immutable). */
  const withFields = (response: Response, fields: [string, string][]) => {
    // A 101 (a WebSocket upgrade): the server sends it as it is, the request is closed.
    if (fields.length === 0 || response.status === 101) return response;
    let answer = response;
    try {
      for (const [name, value] of fields) answer.headers.set(name, value);
    } catch {
      answer = new Response(response.body, response);
      for (const [name, value] of fields) answer.headers.set(name, value);
    }
    return answer;
  };
  /**
   * Logs `line` redacted with the service's key layouts; a log function's throw or rejection is
   * ignored (it must never fail a request).
   */
  const log = serviceLog(service, (line) => callDetached(sink, [line], () => {}));

  /** The failure response; a failing `onError` is logged and the default one sent. */
  const failureResponse = async (
    error: ApiKeyError | ApiKeyStorageError,
    request: Request,
  ): Promise<Response> => {
    try {
      const response = await onError(error, request);
      if (response instanceof Response) return response;
      log("api-keys: onError returned no Response; the default response is sent");
    } catch (failure) {
      log(`${failureLine("onError", failure)}; the default response is sent`);
    }
    return apiKeyErrorResponse(error);
  };

  /**
   * The answer to another throw (a bug, logged by `authorize` when a `TypeError`): the given
   * `onError`'s when a `Response` of status 500 or more (`SafeFetch.errorResponse` answers the
   * generic 500), else `thrown` is rethrown (the server's 500).
   */
  const bugResponse = async (thrown: unknown, request: Request): Promise<Response> => {
    if (onError === apiKeyErrorResponse) throw thrown;
    let response: unknown;
    try {
      response = await onError(thrown as ApiKeyError, request);
    } catch (failure) {
      log(failureLine("onError", failure));
      throw thrown;
    }
    if (response instanceof Response && response.status >= 500) return response;
    await (response as Response | undefined)?.body?.cancel?.().catch(() => {});
    throw thrown;
  };

  /** Logs each route's distinct bug once (a broken route fails every request alike). */
  const reportBug = bugReporter(log);

  const build = (requirements: Readonly<ApiKeyRequirements>): ApiKeyAuthorizer => {
    const authorize = async (request: Request, info?: unknown): Promise<ApiKeyContext> => {
      const resolved = resolveClientIp(clientIpResolver, [request, info], "clientIp", log);
      // A synchronous resolver (the default) costs no extra await.
      const clientIp = isThenable(resolved) ? await resolved : resolved;
      const authorizeOptions: AuthorizeOptions = { ...requirements, clientIp, request };
      try {
        return await service.authorizeRequest(
          (name) => request.headers.get(name),
          authorizeOptions,
        );
      } catch (error) {
        if (error instanceof TypeError) {
          // A bug (a route naming a policy the key lacks, a resolver's bad policy): the server's 500.
          // Remembered by the route's requirements, never by the client's method and path nor the key.
          reportBug(
            `api-keys: ${request.method} ${pathOf(request)}: ${error.message}`,
            `${JSON.stringify(requirements)} ${bugIdentity(error)}`,
          );
        }
        throw error;
      }
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
              const challenge = apiKeyChallenge(error.code);
              const fields: [string, string][] = challenge === undefined
                ? (error instanceof ApiKeyError ? recordRateLimit(request, error) : [])
                : [["WWW-Authenticate", challenge]]; // a 401: before any limit
              return withFields(await failureResponse(error, request), fields);
            }
            return await bugResponse(error, request);
          }
          contexts.set(request, apiKey);
          const fields = recordRateLimit(request, apiKey);
          const response = await handler(request, ...args as unknown as Args);
          // The newest fields recorded for it: a nested check charged on its own counted after this one.
          const newest = rateLimitFields.get(request) ?? fields;
          return withFields(response, withoutOwnFamilies(newest, response.headers));
        };
      },
    });
  };
  return build(requirementsOf({}, options, "createApiKeyAuthorizer", AUTHORIZER_OPTIONS));
}
