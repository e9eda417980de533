/**
 * OpenAPI response objects of documented errors: the error envelope
 * (`application/json`) or problem details (`application/problem+json`), with
 * one example per code, built by the runtime's own body builders. Plain JSON
 * (no Nest imports); shared by the error decorators and `applyGlobalErrors`.
 *
 * @module
 */
import { buildErrorBody } from "../envelope.ts";
import { fallbackErrorCode, isHttpStatus, lookupErrorCode, problemTitle } from "../http_status.ts";
import type { SafeErrorResponseConfig } from "../options.ts";
import type { SafeResponseSettings } from "../settings.ts";
import { MAX_VALIDATION_DETAILS } from "../validation_details.ts";
import {
  buildProblemDetails,
  PROBLEM_JSON_CONTENT_TYPE,
  problemTypeUri,
} from "../problem_details.ts";
import { documentCopy, type OpenApiSchema, schemaRef } from "../_openapi_schemas.ts";

/** How errors are documented. */
export interface ErrorDocumentation {
  /** Problem details instead of the error envelope. */
  problem: boolean;
  /** Codes merged over the default code map (module option `errorCodes`). */
  errorCodes?: Readonly<Record<number, string>>;
  /** Base of derived problem type URIs (module option `problemDetails.baseUrl`). */
  baseUrl?: string;
}

/** How the app of `settings` sends errors: its `problemDetails` and `errorCodes`. */
export function errorDocumentationOf(
  settings: Pick<SafeResponseSettings, "problemDetails" | "errorCodes">,
): ErrorDocumentation {
  return {
    problem: settings.problemDetails !== undefined,
    errorCodes: settings.errorCodes,
    baseUrl: settings.problemDetails?.baseUrl,
  };
}

interface DocumentedError {
  status: number;
  code: string;
  message: string;
  description: string;
  details?: unknown;
}

function optionalString(value: unknown, name: string, decorator: string): string | undefined {
  if (value === undefined || (typeof value === "string" && value !== "")) return value;
  throw new TypeError(`${decorator}: \`${name}\` must be a non-empty string`);
}

function resolve(
  config: SafeErrorResponseConfig,
  documentation: ErrorDocumentation,
  decorator: string,
): DocumentedError {
  const options = typeof config === "object" && config !== null ? config : { status: config };
  const { status } = options;
  if (!isHttpStatus(status, 400)) {
    throw new TypeError(`${decorator}: \`status\` must be an error status (400-599)`);
  }
  const code = optionalString(options.code, "code", decorator) ??
    documentation.errorCodes?.[status] ?? lookupErrorCode(status) ?? fallbackErrorCode(status);
  const message = optionalString(options.message, "message", decorator) ?? problemTitle(status);
  const description = optionalString(options.description, "description", decorator) ??
    problemTitle(status);
  return { status, code, message, description, details: options.details };
}

/** The example body of `error`, built by the runtime's own body builders. */
function example(error: DocumentedError, documentation: ErrorDocumentation): OpenApiSchema {
  const { status, code, message, details } = error;
  if (!documentation.problem) {
    return { ...buildErrorBody({ statusCode: status, code, message, details }) };
  }
  const { baseUrl } = documentation;
  return {
    ...buildProblemDetails({
      type: baseUrl === undefined ? undefined : problemTypeUri(baseUrl, code),
      status,
      code,
      detail: message,
      instance: "/",
      details,
    }),
  };
}

/**
 * The response object of each status in `configs` (several configs of one
 * status become one response with one example per code). Throws a
 * `TypeError` naming `decorator` for a bad config.
 */
export function errorResponses(
  configs: readonly SafeErrorResponseConfig[],
  documentation: ErrorDocumentation,
  decorator: string,
): Map<number, OpenApiSchema> {
  if (!Array.isArray(configs)) throw new TypeError(`${decorator}: expected an array of errors`);
  const grouped = new Map<number, DocumentedError[]>();
  for (const config of configs) {
    const error = resolve(config, documentation, decorator);
    grouped.set(error.status, [...grouped.get(error.status) ?? [], error]);
  }
  const mediaType = documentation.problem ? PROBLEM_JSON_CONTENT_TYPE : "application/json";
  const schema = schemaRef(documentation.problem ? "SafeProblemDetails" : "SafeErrorResponse");
  const responses = new Map<number, OpenApiSchema>();
  for (const [status, errors] of grouped) {
    const examples = Object.fromEntries(errors.map((error) => [
      error.code,
      { summary: error.description, value: example(error, documentation) },
    ]));
    responses.set(status, {
      description: [...new Set(errors.map((error) => error.description))].join("\n\n"),
      content: { [mediaType]: { schema, examples } },
    });
  }
  return responses;
}

/** Whether `schema` is the error envelope: its `$ref`, or an `allOf` narrowing it. */
function isEnvelope(schema: OpenApiSchema | undefined): boolean {
  const { $ref } = schemaRef("SafeErrorResponse");
  return schema?.$ref === $ref ||
    (schema?.allOf as OpenApiSchema[] | undefined)?.[0]?.$ref === $ref;
}

/**
 * Adds the problem details the server sends in problem-details mode to an error `response` at
 * `status` documented only as the envelope (a route's own error decorator, the API keys admin
 * routes): `application/problem+json` beside `application/json`, with one example per envelope
 * example. Returns whether it added it (a response already documenting problem details, a `$ref`
 * or one without the envelope is left as it is).
 */
export function addProblemMedia(
  status: number,
  response: unknown,
  documentation: ErrorDocumentation,
): boolean {
  const content = (response as { content?: Record<string, OpenApiSchema> } | undefined)?.content;
  const envelope = content?.["application/json"];
  if (content?.[PROBLEM_JSON_CONTENT_TYPE] !== undefined) return false;
  if (!isEnvelope(envelope?.schema as OpenApiSchema | undefined)) return false;
  const problem = { ...documentation, problem: true };
  const examples = Object.entries((envelope!.examples ?? {}) as Record<string, OpenApiSchema>)
    .map(([name, { summary, value }]) => {
      const error = (value as { error?: Record<string, unknown> } | undefined)?.error ?? {};
      const documented = {
        status,
        code: typeof error.code === "string" ? error.code : name,
        message: typeof error.message === "string" ? error.message : problemTitle(status),
        description: typeof summary === "string" ? summary : problemTitle(status),
        details: error.details,
      };
      return [name, { summary: documented.description, value: example(documented, problem) }];
    });
  content![PROBLEM_JSON_CONTENT_TYPE] = {
    schema: schemaRef("SafeProblemDetails"),
    ...(examples.length === 0 ? {} : { examples: Object.fromEntries(examples) }),
  };
  return true;
}

/** `details` of validation errors with `validationDetails: "fields"`. */
const FIELD_DETAILS_SCHEMA: OpenApiSchema = {
  type: "array",
  maxItems: MAX_VALIDATION_DETAILS,
  items: {
    type: "object",
    required: ["pointer", "messages"],
    properties: {
      pointer: { type: "string", format: "json-pointer" },
      messages: { type: "array", items: { type: "string" } },
    },
  },
};

/** Where `details` sits in each documented error body, by its component's `$ref`. */
const DETAILS_AT: Record<string, (details: OpenApiSchema) => OpenApiSchema> = {
  [schemaRef("SafeErrorResponse").$ref]: (details) => ({
    type: "object",
    properties: { error: { type: "object", properties: { details } } },
  }),
  [schemaRef("SafeProblemDetails").$ref]: (details) => ({
    type: "object",
    properties: { details },
  }),
};

/**
 * Documents the `details` of a 400 `response` (a validation error) as
 * `[{ pointer, messages }]`, the shape `validationDetails: "fields"` sends:
 * each error envelope or problem-details schema (a bare `$ref` to
 * `SafeErrorResponse` or `SafeProblemDetails`) becomes
 * `allOf: [$ref, { details narrowed }]`. Other schemas are left as they are,
 * so applying it twice changes nothing.
 */
export function documentFieldDetails(response: unknown): void {
  const content = (response as { content?: Record<string, { schema?: OpenApiSchema }> })
    ?.content;
  for (const media of Object.values(content ?? {})) {
    const ref = media?.schema?.$ref;
    const narrow = typeof ref === "string" && Object.keys(media.schema!).length === 1
      ? DETAILS_AT[ref]
      : undefined;
    if (narrow !== undefined) {
      media.schema = { allOf: [{ $ref: ref }, narrow(documentCopy(FIELD_DETAILS_SCHEMA))] };
    }
  }
}
