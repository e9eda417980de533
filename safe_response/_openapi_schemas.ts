/**
 * The OpenAPI 3.0 component schemas of the envelope, its meta and problem details, as plain JSON.
 * @module
 */

/** An OpenAPI 3.0 schema object (plain JSON). */
export type OpenApiSchema = Record<string, unknown>;

/**
 * Name of one component schema of {@link SAFE_RESPONSE_SCHEMAS}.
 */
export type SafeResponseSchemaName =
  | "SafePaginationLinks"
  | "SafePaginationMeta"
  | "SafeCursorPaginationMeta"
  | "SafeSortInfo"
  | "SafeDeprecationMeta"
  | "SafeRateLimitMeta"
  | "SafeResponseMeta"
  | "SafeErrorMeta"
  | "SafeSuccessResponse"
  | "SafeErrorBody"
  | "SafeErrorResponse"
  | "SafeProblemDetails";

/** The name each component had in `@nestarc/safe-response` (`schemaNames: "dto"`). */
export const DTO_SCHEMA_NAMES: Readonly<Record<SafeResponseSchemaName, string>> = Object.freeze({
  SafePaginationLinks: "PaginationLinksDto",
  SafePaginationMeta: "PaginationMetaDto",
  SafeCursorPaginationMeta: "CursorPaginationMetaDto",
  SafeSortInfo: "SortMetaDto",
  SafeDeprecationMeta: "DeprecationMetaDto",
  SafeRateLimitMeta: "RateLimitMetaDto",
  SafeResponseMeta: "ResponseMetaDto",
  SafeErrorMeta: "ErrorResponseMetaDto",
  SafeSuccessResponse: "SafeSuccessResponseDto",
  SafeErrorBody: "ErrorDetailDto",
  SafeErrorResponse: "SafeErrorResponseDto",
  SafeProblemDetails: "ProblemDetailsDto",
});

/**
 * A fresh, mutable deep copy of the JSON `value`: what goes into an OpenAPI document. Every document
 * owns its objects, since the functions of `./openapi` (and `@nestjs/swagger`'s 3.1 conversion)
 * change a document in place; a shared object would carry one document's changes into every other.
 * The schemas here are OpenAPI 3.0's: when `document` is 3.1 (`openapi` starting with `3.1`), each
 * `nullable` of the copy becomes 3.1's form, as `@nestjs/swagger` writes its own schemas there.
 */
export function documentCopy<T>(value: T, document?: { openapi?: unknown }): T {
  const copy = structuredClone(value);
  if (typeof document?.openapi === "string" && document.openapi.startsWith("3.1")) {
    nullableToOas31(copy);
  }
  return copy;
}

/** Keywords whose values are data, not schemas. */
const DATA_KEYWORDS = new Set(["example", "examples", "default", "const", "enum"]);
/** Keywords whose values map names to schemas (a name is never a keyword). */
const NAMED_SCHEMAS = new Set(["properties", "patternProperties", "$defs", "schemas", "headers"]);

/** Keywords that annotate a schema without constraining its values. */
const ANNOTATIONS = new Set([
  "title",
  "description",
  "default",
  "example",
  "examples",
  "deprecated",
  "readOnly",
  "writeOnly",
  "externalDocs",
  "xml",
]);

/**
 * Rewrites, in place, every `nullable: true` of OpenAPI 3.0 under `node` as 3.1 writes it: `type`
 * gains `"null"` (an `enum` gains `null`); a schema with a `$ref` or a combinator becomes `anyOf:
 * [its constraints, { type: "null" }]` (its annotations kept beside); `nullable: false` is dropped.
 */
function nullableToOas31(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) nullableToOas31(item);
    return;
  }
  if (typeof node !== "object" || node === null) return;
  const schema = node as Record<string, unknown>;
  for (const [key, value] of Object.entries(schema)) {
    if (DATA_KEYWORDS.has(key) || key.startsWith("x-")) continue;
    if (NAMED_SCHEMAS.has(key) && typeof value === "object" && value !== null) {
      for (const named of Object.values(value)) nullableToOas31(named);
    } else {
      nullableToOas31(value);
    }
  }
  if (typeof schema.nullable !== "boolean") return;
  const nullable = schema.nullable;
  delete schema.nullable;
  if (!nullable) return;
  const combined = ["allOf", "oneOf", "anyOf"].some((key) => Array.isArray(schema[key]));
  if (typeof schema.$ref === "string" || combined) {
    // Every constraint (`type`, each combinator, ...) moves into the non-null branch; annotations
    // and extensions stay, so null passes whatever else the schema asks.
    const inner: Record<string, unknown> = {};
    for (const key of Object.keys(schema)) {
      if (ANNOTATIONS.has(key) || key.startsWith("x-")) continue;
      inner[key] = schema[key];
      delete schema[key];
    }
    schema.anyOf = [inner, { type: "null" }];
    return;
  }
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    schema.type = types.includes("null") ? types : [...types, "null"];
  }
  if (Array.isArray(schema.enum) && !schema.enum.includes(null)) {
    schema.enum = [...schema.enum, null];
  }
}

/** A `$ref` to the component schema `name`. */
export function schemaRef(name: SafeResponseSchemaName): { $ref: string } {
  return { $ref: `#/components/schemas/${name}` };
}

const string = { type: "string" };
const integer = { type: "integer" };
/** A response time in milliseconds, as the server measures it: never negative. */
const duration = { type: "number", minimum: 0 };

/** An HTTP status (`statusCode` of the envelopes, `status` of problem details). */
export const HTTP_STATUS_SCHEMA: Readonly<OpenApiSchema> = Object.freeze({
  type: "integer",
  minimum: 100,
  maximum: 599,
});
const nullableString = { type: "string", nullable: true };
const anyValue = {};

function object(
  properties: Record<string, OpenApiSchema>,
  required: string[],
  extra: OpenApiSchema = {},
): OpenApiSchema {
  return { type: "object", properties, ...(required.length > 0 ? { required } : {}), ...extra };
}

/** The component schemas, by their stable names. */
export const SAFE_RESPONSE_SCHEMAS: Readonly<Record<SafeResponseSchemaName, OpenApiSchema>> =
  deepFreeze({
    SafePaginationLinks: object(
      {
        self: string,
        first: string,
        prev: nullableString,
        next: nullableString,
        last: nullableString,
      },
      ["self", "first", "prev", "next", "last"],
    ),
    SafePaginationMeta: object(
      {
        type: { type: "string", enum: ["offset"] },
        page: integer,
        limit: integer,
        total: integer,
        totalPages: integer,
        hasNext: { type: "boolean" },
        hasPrev: { type: "boolean" },
        links: { $ref: "#/components/schemas/SafePaginationLinks" },
      },
      ["page", "limit", "total", "totalPages", "hasNext", "hasPrev"],
    ),
    SafeCursorPaginationMeta: object(
      {
        type: { type: "string", enum: ["cursor"] },
        nextCursor: nullableString,
        previousCursor: nullableString,
        hasMore: { type: "boolean" },
        limit: integer,
        totalCount: integer,
        links: { $ref: "#/components/schemas/SafePaginationLinks" },
      },
      ["type", "nextCursor", "previousCursor", "hasMore", "limit"],
    ),
    SafeSortInfo: object({ field: string, order: { type: "string", enum: ["asc", "desc"] } }, [
      "field",
      "order",
    ]),
    SafeDeprecationMeta: object(
      {
        deprecated: { type: "boolean", enum: [true] },
        since: string,
        sunset: string,
        message: string,
        link: string,
        sunsetLink: string,
      },
      ["deprecated"],
    ),
    SafeRateLimitMeta: object(
      {
        limit: integer,
        remaining: integer,
        reset: integer,
        retryAfter: integer,
      },
      ["limit", "remaining", "reset"],
    ),
    SafeResponseMeta: object(
      {
        pagination: {
          oneOf: [
            { $ref: "#/components/schemas/SafePaginationMeta" },
            { $ref: "#/components/schemas/SafeCursorPaginationMeta" },
          ],
        },
        message: string,
        responseTime: duration,
        sort: { $ref: "#/components/schemas/SafeSortInfo" },
        filters: { type: "object", additionalProperties: true },
        deprecation: { $ref: "#/components/schemas/SafeDeprecationMeta" },
        rateLimit: { $ref: "#/components/schemas/SafeRateLimitMeta" },
        apiVersion: string,
        fields: { type: "array", items: string },
      },
      [],
      { additionalProperties: true },
    ),
    SafeErrorMeta: object(
      {
        deprecation: { $ref: "#/components/schemas/SafeDeprecationMeta" },
        rateLimit: { $ref: "#/components/schemas/SafeRateLimitMeta" },
        responseTime: duration,
        apiVersion: string,
      },
      [],
      { additionalProperties: true },
    ),
    SafeSuccessResponse: object(
      {
        success: { type: "boolean", enum: [true] },
        statusCode: HTTP_STATUS_SCHEMA,
        code: string,
        requestId: string,
        data: anyValue,
        meta: { $ref: "#/components/schemas/SafeResponseMeta" },
        timestamp: string,
        path: string,
      },
      ["success", "statusCode", "data"],
    ),
    SafeErrorBody: object({ code: string, message: string, details: anyValue }, [
      "code",
      "message",
    ]),
    SafeErrorResponse: object(
      {
        success: { type: "boolean", enum: [false] },
        statusCode: HTTP_STATUS_SCHEMA,
        requestId: string,
        error: { $ref: "#/components/schemas/SafeErrorBody" },
        meta: { $ref: "#/components/schemas/SafeErrorMeta" },
        timestamp: string,
        path: string,
      },
      ["success", "statusCode", "error"],
    ),
    SafeProblemDetails: object(
      {
        type: { type: "string", format: "uri-reference" },
        title: string,
        status: HTTP_STATUS_SCHEMA,
        detail: string,
        instance: string,
        code: string,
        requestId: string,
        details: anyValue,
        meta: { $ref: "#/components/schemas/SafeErrorMeta" },
      },
      ["type", "title", "status", "detail", "instance"],
    ),
  });

/** `@SafeResponse()`'s schema: the success envelope inline, `meta` as an open object. */
export const BASIC_SUCCESS_SCHEMA: OpenApiSchema = deepFreeze({
  ...SAFE_RESPONSE_SCHEMAS.SafeSuccessResponse,
  properties: {
    ...SAFE_RESPONSE_SCHEMAS.SafeSuccessResponse.properties as object,
    meta: { type: "object", additionalProperties: true },
  },
});

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const nested of Object.values(value)) deepFreeze(nested);
    Object.freeze(value);
  }
  return value;
}
