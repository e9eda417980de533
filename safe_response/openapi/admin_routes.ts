/**
 * `applyApiKeysAdminRoutes`: the admin routes of `./api-keys/admin`
 * (docs/settings-page.md) written into an OpenAPI document. Their
 * controllers answer through `@Res()`, so no decorator can describe them.
 *
 * @module
 */
import { documentCopy, type OpenApiSchema, SAFE_RESPONSE_SCHEMAS } from "../_openapi_schemas.ts";
import type { SafeResponseModuleOptions } from "../options.ts";
import { resolveSettings } from "../settings.ts";
import type { OpenApiDocumentLike } from "./safe_response.document.ts";
import {
  addProblemMedia,
  type ErrorDocumentation,
  errorDocumentationOf,
} from "./_error_responses.ts";
import { documentHeaders, STATUS_HEADERS } from "./_response_headers.ts";
import { AUDIT_ACTIONS } from "../../api_keys/audit/types.ts";
import { CSRF_METHODS, csrfOf } from "../../client/_csrf.ts";

/**
 * Options of `applyApiKeysAdminRoutes`.
 *
 * @example
 * ```ts
 * import type { ApiKeysAdminRoutesDocsOptions } from "@saferoute/api-kit/safe-response/openapi";
 * const options: ApiKeysAdminRoutesDocsOptions = { prefix: "/api-keys", security: [{ session: [] }] };
 * ```
 */
export interface ApiKeysAdminRoutesDocsOptions {
  /** Where the routes are mounted, such as `/api-keys`. */
  prefix: string;
  /** Tags of every operation (default: the operation's own, else `["api-keys"]`). */
  tags?: string[];
  /** Security requirements of every operation (default: the operation's own, else none). */
  security?: Record<string, string[]>[];
  /**
   * The CSRF header of `POST`, `PATCH` and `DELETE`, as the handler's `csrf`
   * option (default `{ header: "x-requested-with", value: "api-keys-manager" }`;
   * `false`: none).
   */
  csrf?: { header?: string; value?: string } | false;
  /**
   * The app's module option `problemDetails`, as given to `applyGlobalErrors`: when on, each error
   * is documented as `application/problem+json` too (a guard's refusal, sent through the filter),
   * beside the envelope the handler sends (default: off).
   */
  problemDetails?: SafeResponseModuleOptions["problemDetails"];
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const str = { type: "string" };
const nullableDate = { type: "string", format: "date-time", nullable: true };
const nullableString = { type: "string", nullable: true };
const strings = { type: "array", items: str };
const object = (properties: Record<string, unknown>, required = Object.keys(properties)) => ({
  type: "object",
  properties,
  ...(required.length === 0 ? {} : { required }),
});

/** The `KeyView` fields every key has (credits only with a limiter). */
const KEY_VIEW = {
  id: str,
  name: str,
  environment: { type: "string", enum: ["live", "test"] },
  prefix: str,
  scopes: strings,
  allowedIpCidrs: strings,
  status: { type: "string", enum: ["active", "rotating", "expired", "revoked"] },
  createdAt: { type: "string", format: "date-time" },
  lastUsedAt: nullableDate,
  expiresAt: nullableDate,
  revokedAt: nullableDate,
  rotatedAt: nullableDate,
  replacedByKeyId: { type: "string", nullable: true },
  replacesKeyId: { type: "string", nullable: true },
  createdBy: { type: "string", nullable: true },
};

const boolean = { type: "boolean" };
const usageWindow = {
  granularity: { type: "string", enum: ["hour", "day"] },
  from: { type: "string", format: "date-time" },
  to: { type: "string", format: "date-time" },
};

const SCHEMAS: Record<string, object> = {
  ApiKeysAdminKeyView: object({
    ...KEY_VIEW,
    credits: { type: "integer", minimum: 0 },
    creditsNextRefillAt: nullableDate,
    creditsRefillAmount: { type: "integer", minimum: 0, nullable: true },
    creditsSharedBy: { type: "string", enum: ["tenant"] },
  }, Object.keys(KEY_VIEW)),
  ApiKeysAdminCapabilities: object({
    rename: boolean,
    conditionalRename: { ...boolean, description: "PATCH /keys/{id} takes expectedName" },
    usage: boolean,
  }),
  ApiKeysAdminKeyList: object({
    keys: { type: "array", items: ref("ApiKeysAdminKeyView") },
    nextCursor: { type: "string", nullable: true },
    capabilities: ref("ApiKeysAdminCapabilities"),
    tenantCredits: {
      ...object({
        credits: { type: "integer", minimum: 0 },
        nextRefillAt: nullableDate,
        refillAmount: { type: "integer", minimum: 0, nullable: true },
      }),
      nullable: true,
    },
  }, ["keys", "nextCursor", "capabilities"]),
  ApiKeysAdminConfig: object({
    scopes: {
      type: "array",
      items: object({ scope: str, description: str }, ["scope"]),
    },
    environments: strings,
    gracePresets: strings,
    defaultGrace: str,
    expiryPresets: strings,
    defaultExpiry: str,
    capabilities: ref("ApiKeysAdminCapabilities"),
    csrf: { ...object({ header: str, value: str }), nullable: true },
    can: object({
      create: boolean,
      rename: boolean,
      rotate: boolean,
      revoke: boolean,
      audit: boolean,
    }),
    limits: {
      ...object({
        policies: {
          type: "array",
          items: object({
            name: str,
            limit: { type: "integer", minimum: 1 },
            windowMs: { type: "integer", minimum: 1 },
          }),
        },
        credits: {
          ...object({
            amount: { type: "integer", minimum: 0 },
            refillAmount: { type: "integer", minimum: 0, nullable: true },
            refillEvery: { type: "string", nullable: true },
            sharedBy: { type: "string", enum: ["tenant"] },
          }, ["amount", "refillAmount", "refillEvery"]),
          nullable: true,
        },
      }),
      nullable: true,
    },
  }),
  ApiKeysAdminCreateBody: object({
    name: { type: "string", minLength: 1, maxLength: 200 },
    scopes: { ...strings, minItems: 1, maxItems: 50 },
    environment: { type: "string", enum: ["live", "test"] },
    expiresIn: {
      type: "string",
      enum: ["7d", "30d", "90d", "1y", "never"],
      description: "An expiry preset of the config; not with expiresAt",
    },
    expiresAt: {
      type: "string",
      format: "date-time",
      description:
        "An expiry date and time with its offset (such as 2030-01-31T12:00:00Z): in the future, " +
        "within the service's TTL policy and the caller's own expiry; not with expiresIn",
    },
    allowedIpCidrs: { ...strings, maxItems: 50 },
  }, ["name", "scopes"]),
  ApiKeysAdminRotateBody: object({
    grace: { type: "string", enum: ["none", "1h", "24h", "7d"] },
    name: { type: "string", minLength: 1, maxLength: 200 },
  }, []),
  ApiKeysAdminRenameBody: object({
    name: { type: "string", minLength: 1, maxLength: 200 },
    expectedName: {
      type: "string",
      minLength: 1,
      maxLength: 200,
      nullable: true,
      description: "Renames only while the key has this name, else 409 api_key_name_changed " +
        "(with capabilities.conditionalRename, else 501); null or omitted: no precondition",
    },
  }, ["name"]),
  ApiKeysAdminIssuedKey: object({
    key: { type: "string", description: "The secret: in this answer only, never again" },
    record: ref("ApiKeysAdminKeyView"),
  }),
  ApiKeysAdminRotatedKey: object({
    key: { type: "string", description: "The secret: in this answer only, never again" },
    record: ref("ApiKeysAdminKeyView"),
    replacedKeyId: str,
    graceExpiresAt: { type: "string", format: "date-time" },
  }),
  ApiKeysAdminUsage: object({
    keyId: str,
    ...usageWindow,
    buckets: { type: "array", items: { type: "object" } },
  }),
  ApiKeysAdminAuditRecord: object({
    v: { type: "integer", enum: [1] },
    action: { type: "string", enum: [...AUDIT_ACTIONS] },
    actor: str,
    keyId: nullableString,
    prefix: nullableString,
    requestId: nullableString,
    clientAddress: nullableString,
    outcome: { type: "string", enum: ["success", "refused"] },
    changes: {
      type: "object",
      description: "The changed fields, each value before and after (null where it had none)",
      additionalProperties: object({ before: {}, after: {} }),
    },
    tenantId: str,
    seq: { type: "integer", minimum: 1 },
    at: { type: "string", format: "date-time" },
    prevHash: str,
    hash: str,
  }),
  ApiKeysAdminAuditPage: object({
    records: { type: "array", items: ref("ApiKeysAdminAuditRecord") },
    nextCursor: nullableString,
  }),
  ApiKeysAdminUsageBatch: object({
    ...usageWindow,
    keys: {
      type: "object",
      additionalProperties: { type: "array", items: { type: "object" } },
    },
  }),
};

const query = (name: string, schema: object) => ({ name, in: "query", required: false, schema });
const USAGE_QUERY = [
  query("granularity", usageWindow.granularity),
  query("from", usageWindow.from),
  query("to", usageWindow.to),
];
/** The query parameters of the routes that take some, by path and method. */
const QUERIES: Record<string, object[]> = {
  "get /keys": [
    query("limit", { type: "integer", minimum: 1, maximum: 100, default: 25 }),
    query("cursor", str),
    query("q", { type: "string", maxLength: 200 }),
    query("status", {
      type: "string",
      enum: ["active", "rotating", "expired", "revoked", "all"],
    }),
    query("environment", { type: "string", enum: ["live", "test"] }),
    query("sort", {
      type: "string",
      enum: ["created_desc", "created_asc", "name_asc", "last_used_desc"],
      default: "created_desc",
    }),
  ],
  "get /keys/{id}/usage": USAGE_QUERY,
  "get /audit": [
    query("keyId", str),
    query("actor", str),
    query("action", { type: "string", enum: [...AUDIT_ACTIONS] }),
    query("from", usageWindow.from),
    query("to", usageWindow.to),
    query("cursor", str),
    query("limit", { type: "integer", minimum: 1, maximum: 100, default: 25 }),
  ],
  "get /usage": [
    {
      ...query("keys", { type: "string" }),
      required: true,
      description: "1 to 100 key ids, comma-separated",
    },
    ...USAGE_QUERY,
  ],
};

/** Each route: summary, success status and schema, request body schema, error statuses. */
const ROUTES: [string, string, string, number, string, string | null, number[]][] = [
  ["/config", "get", "The server's offer", 200, "ApiKeysAdminConfig", null, []],
  ["/keys", "get", "A page of the tenant's keys", 200, "ApiKeysAdminKeyList", null, [400]],
  ["/keys", "post", "Create a key", 201, "ApiKeysAdminIssuedKey", "ApiKeysAdminCreateBody", [
    400,
    413,
  ]],
  ["/keys/{id}", "get", "Read a key", 200, "ApiKeysAdminKeyView", null, [404]],
  ["/keys/{id}", "patch", "Rename a key", 200, "ApiKeysAdminKeyView", "ApiKeysAdminRenameBody", [
    400,
    404,
    409,
    413,
    501,
  ]],
  ["/keys/{id}", "delete", "Revoke a key", 200, "ApiKeysAdminKeyView", null, [404]],
  [
    "/keys/{id}/rotate",
    "post",
    "Rotate a key",
    201,
    "ApiKeysAdminRotatedKey",
    "ApiKeysAdminRotateBody",
    [400, 404, 409, 413],
  ],
  ["/keys/{id}/usage", "get", "A key's usage", 200, "ApiKeysAdminUsage", null, [400, 404, 501]],
  ["/usage", "get", "The usage of a page of keys", 200, "ApiKeysAdminUsageBatch", null, [
    400,
    404,
    501,
  ]],
  ["/audit", "get", "A page of the tenant's audit log", 200, "ApiKeysAdminAuditPage", null, [
    400,
    501,
  ]],
];

/**
 * What every route may answer besides its own errors: 401 (`tenantOf` answered no tenant), 403
 * (CSRF, `canManage`, the policy), 500 (a hook's failure) and 503 (the storage failing).
 */
const EVERY_ROUTE_ERRORS = [401, 403, 500, 503];

/** Adds (a copy of) the safe-response schema `name` and every schema it refers to, when missing. */
function addWithRefs(
  document: OpenApiDocumentLike,
  schemas: Record<string, object>,
  name: string,
): void {
  if (schemas[name] !== undefined) return;
  const schema = (SAFE_RESPONSE_SCHEMAS as Record<string, OpenApiSchema>)[name];
  schemas[name] = documentCopy(schema, document);
  for (const [, target] of JSON.stringify(schema).matchAll(/"#\/components\/schemas\/(\w+)"/g)) {
    addWithRefs(document, schemas, target);
  }
}

/** The CSRF header the handler requires, as a parameter. */
type CsrfHeader = { header: string; value: string } | null;

/** The `parameters` of an operation: `id` in the path, its query parameters, the CSRF header. */
function parametersOf(path: string, method: string, csrf: CsrfHeader): object[] {
  return [
    ...(path.includes("{id}") ? [{ name: "id", in: "path", required: true, schema: str }] : []),
    ...(QUERIES[`${method} ${path}`] ?? []),
    ...(csrf !== null && CSRF_METHODS.has(method.toUpperCase())
      ? [{
        name: csrf.header,
        in: "header",
        required: true,
        description: "The CSRF header (the handler's `csrf` option); without it 403 `csrf_refused`",
        schema: { type: "string", enum: [csrf.value] },
      }]
      : []),
  ];
}

type Operation = Record<string, unknown> & { responses?: Record<string, unknown> };
type Response = { description?: string; content?: Record<string, unknown>; headers?: object };

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const parameterKey = (parameter: unknown) =>
  isObject(parameter) ? `${parameter.in} ${String(parameter.name).toLowerCase()}` : "";

/**
 * `own` (this function's operation) merged into `existing` (the operation
 * `@nestjs/swagger` built for the controller, or one written before): its
 * security, tags, other fields, parameters, responses, media types and
 * headers stay; `own` gives each of its responses' description and media
 * types (`application/json`, with problem details `application/problem+json`)
 * and its status headers, its parameters, its request body. A header documented
 * on every existing response (`applyGlobalErrors`' request id, a `Deprecated`
 * controller's headers) is documented on the responses added too, as
 * `applyGlobalErrors` run after would.
 */
function merge(
  document: OpenApiDocumentLike,
  existing: unknown,
  own: Operation,
  options: ApiKeysAdminRoutesDocsOptions,
): Operation {
  if (!isObject(existing)) return own;
  const owned = new Set((own.parameters as unknown[] | undefined ?? []).map(parameterKey));
  const parameters = [
    ...(own.parameters as unknown[] | undefined ?? []),
    ...(Array.isArray(existing.parameters) ? existing.parameters : [])
      .filter((parameter) => !owned.has(parameterKey(parameter))),
  ];
  const tags = options.tags ??
    (Array.isArray(existing.tags) && existing.tags.length > 0 ? existing.tags : own.tags);
  const security = options.security ?? existing.security;
  const before = Object.values(isObject(existing.responses) ? existing.responses : {})
    .filter((response): response is Response => isObject(response) && !("$ref" in response));
  const shared = before.length === 0 ? {} : Object.fromEntries(
    Object.entries(before[0].headers ?? {}).filter(([name]) =>
      before.every((response) => isObject(response.headers) && name in response.headers)
    ),
  );
  const responses: Record<string, unknown> = { ...existing.responses as object };
  for (const [status, response] of Object.entries(own.responses as Record<string, Response>)) {
    const old = responses[status];
    if (isObject(old) && !("$ref" in old)) {
      const content = { ...(old.content ?? {}) as Record<string, unknown> };
      for (const media of Object.keys(response.content ?? {})) delete content[media];
      const headers = { ...response.headers, ...(old.headers ?? {}) as object };
      responses[status] = {
        ...old,
        description: response.description,
        content: { ...response.content, ...content },
        ...(Object.keys(headers).length === 0 ? {} : { headers }),
      };
    } else {
      const headers = { ...documentCopy(shared, document), ...response.headers };
      responses[status] = {
        ...response,
        ...(Object.keys(headers).length === 0 ? {} : { headers }),
      };
    }
  }
  const { requestBody } = own;
  return {
    ...existing,
    tags,
    summary: existing.summary ?? own.summary,
    ...(security === undefined ? {} : { security }),
    ...(parameters.length === 0 ? {} : { parameters }),
    ...(requestBody === undefined ? {} : { requestBody }),
    responses,
  };
}

/** An error response of the admin routes at `code`: the envelope, problem details when on. */
function errorResponse(code: number, description: string, documentation: ErrorDocumentation) {
  const response = {
    description,
    content: { "application/json": { schema: ref("SafeErrorResponse") } },
  };
  if (documentation.problem) addProblemMedia(code, response, documentation);
  documentHeaders(response, STATUS_HEADERS[code] ?? []);
  return response;
}

/**
 * Adds the admin routes below `options.prefix` (paths, operations, their
 * parameters with the CSRF header, bodies, answers and errors in the envelope
 * shape) and their component schemas to `document`. An operation already
 * there (the controller's, as `@nestjs/swagger` builds it, with its
 * decorators' tags and security, or `applyGlobalErrors`' errors and headers)
 * is merged into, not replaced, so it may run before or after
 * `applyGlobalErrors`. Mutates and returns `document`; applying it twice
 * changes nothing. Everything added is the document's own (no object shared
 * with another document, or between two responses).
 *
 * @example
 * ```ts
 * import { applyApiKeysAdminRoutes } from "@saferoute/api-kit/safe-response/openapi";
 * const document = applyApiKeysAdminRoutes({ paths: {} }, { prefix: "/admin" });
 * Object.keys(document.paths!); // ["/admin/config", "/admin/keys", ...]
 * ```
 */
export function applyApiKeysAdminRoutes<T extends OpenApiDocumentLike>(
  document: T,
  options: ApiKeysAdminRoutesDocsOptions,
): T {
  const prefix = options?.prefix;
  if (typeof prefix !== "string" || !prefix.startsWith("/") || prefix.endsWith("/")) {
    throw new TypeError('options.prefix must be a path such as "/api-keys"');
  }
  const csrf = csrfOf(options.csrf);
  const documentation = errorDocumentationOf(
    resolveSettings({ problemDetails: options.problemDetails }, "applyApiKeysAdminRoutes"),
  );
  const paths = document.paths ??= {};
  const schemas = (document.components ??= {}).schemas ??= {};
  for (const [name, schema] of Object.entries(SCHEMAS)) {
    schemas[name] ??= documentCopy(schema, document);
  }
  addWithRefs(document, schemas, "SafeErrorResponse");
  if (documentation.problem) addWithRefs(document, schemas, "SafeProblemDetails");
  for (const [path, method, summary, status, answer, body, errors] of ROUTES) {
    const item = (paths[`${prefix}${path}`] ??= {}) as Record<string, unknown>;
    const responses: Record<string, unknown> = {
      [status]: {
        description: summary,
        content: { "application/json": { schema: ref(answer) } },
      },
    };
    const parameters = parametersOf(path, method, csrf);
    const refused = parameters.some((parameter) => (parameter as { in: string }).in === "header");
    for (const code of [...EVERY_ROUTE_ERRORS, ...errors].sort((a, b) => a - b)) {
      responses[code] = errorResponse(
        code,
        code === 403 && refused
          ? `Error 403 (\`csrf_refused\` without the \`${csrf!.header}\` header)`
          : `Error ${code}`,
        documentation,
      );
    }
    item[method] = merge(
      document,
      item[method],
      documentCopy({
        tags: options.tags ?? ["api-keys"],
        summary,
        ...(options.security === undefined ? {} : { security: options.security }),
        ...(parameters.length === 0 ? {} : { parameters }),
        ...(body === null ? {} : {
          requestBody: {
            required: method !== "post" || path === "/keys",
            content: { "application/json": { schema: ref(body) } },
          },
        }),
        responses,
      }, document),
      options,
    );
  }
  return document;
}
