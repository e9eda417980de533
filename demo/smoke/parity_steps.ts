/**
 * Steps of the smoke tour for the parity features and the OpenAPI document:
 * field selection, the error catalog (envelope and problem details), the
 * `version` option's `meta.apiVersion`, and the document's deprecated flag
 * and global errors.
 *
 * @module
 */
import {
  hasFieldSelection,
  isError,
  isProblemDetailsResponse,
  isSuccess,
} from "../../client/mod.ts";
import { problemTypeUri } from "../../safe_response/mod.ts";
import { DemoErrors } from "../errors.ts";
import { DEMO_API_VERSION, PROBLEM_BASE_URL } from "../safe_response_options.ts";
import type { DemoKeys } from "../seed.ts";
import { type Bag, bag, expect, type StepAnswer, type StepSpec } from "./http_step.ts";

/** Runs one step against a server and returns its answer (undefined when the request failed). */
export type RunStep = (spec: StepSpec) => Promise<StepAnswer | undefined>;

/** The operation `method` of `path` in an OpenAPI document body. */
const operation = (document: unknown, path: string, method: string): Bag =>
  bag(bag(bag(bag(document).paths)[path])[method]);

/** Whether `operation` documents `status` as `mediaType` with an example of `code`. */
function documents(operation: Bag, status: string, mediaType: string, code: string): boolean {
  const content = bag(bag(bag(operation.responses)[status]).content);
  return mediaType in content && code in bag(bag(content[mediaType]).examples);
}

/** Field selection, the error catalog and `meta.apiVersion` on the envelope server. */
export async function runParitySteps(api: RunStep, keys: DemoKeys): Promise<void> {
  await api({
    title: "field selection: ?fields=id,name trims data, lists meta.fields",
    path: "/api/projects?limit=3&fields=id,name",
    key: keys.reader.key,
    status: 200,
    check: ({ body }) => {
      if (!isSuccess<Bag[]>(body)) return "not a success envelope";
      const keysOf = body.data.map((item) => Object.keys(item).sort().join(","));
      return expect(body.data.length === 3, "not 3 projects") ??
        expect(keysOf.every((fields) => fields === "id,name"), `data kept ${keysOf[0]}`) ??
        expect(
          hasFieldSelection(body.meta) && body.meta.fields.join(",") === "id,name",
          "meta.fields is not [id, name]",
        );
    },
  });
  await api({
    title: "version option: meta.apiVersion on a success",
    path: "/api/whoami",
    key: keys.reader.key,
    status: 200,
    check: ({ body }) =>
      expect(bag(bag(body).meta).apiVersion === DEMO_API_VERSION, "no meta.apiVersion"),
  });
  await api({
    title: "version option: meta.apiVersion on a guard's error",
    path: "/api/whoami",
    status: 401,
    code: "api_key_missing",
    check: ({ body }) =>
      expect(isError(body) && body.meta?.apiVersion === DEMO_API_VERSION, "no meta.apiVersion"),
  });
  const archived = DemoErrors.get("PROJECT_ALREADY_ARCHIVED")!;
  await api({
    title: "error catalog: SafeException answers the key as error.code",
    method: "POST",
    path: "/api/projects/prj_003/archive",
    key: keys.admin.key,
    status: archived.status,
    code: "PROJECT_ALREADY_ARCHIVED",
    check: ({ body }) =>
      expect(isError(body) && body.error.message === archived.message, "not the catalog message") ??
        expect(bag(bag(body).error).details !== undefined, "no catalog details"),
  });
  await api({
    title: "archive an active project",
    method: "POST",
    path: "/api/projects/prj_001/archive",
    key: keys.admin.key,
    status: 200,
    code: "PROJECT_ARCHIVED",
    check: ({ body }) =>
      expect(isSuccess<Bag>(body) && body.data.status === "archived", "not archived"),
  });
}

/**
 * The catalog error as problem details, on the problem-details server, and
 * (when the server has `openapi`) the global errors its document shows.
 */
export async function runParityProblemSteps(
  problem: RunStep,
  keys: DemoKeys,
  openapi = true,
): Promise<void> {
  await problem({
    title: "error catalog as problem details: type from the key",
    method: "POST",
    path: "/api/projects/prj_003/archive",
    key: keys.admin.key,
    status: 409,
    code: "PROJECT_ALREADY_ARCHIVED",
    check: ({ body }) =>
      isProblemDetailsResponse(body)
        ? expect(
          body.type === problemTypeUri(PROBLEM_BASE_URL, "PROJECT_ALREADY_ARCHIVED"),
          "type not derived from the key",
        )
        : "not problem details",
  });
  if (!openapi) return;
  await problem({
    title: "OpenAPI global errors as problem details",
    path: "/openapi.json",
    status: 200,
    check: ({ body }) =>
      expect(
        documents(
          operation(body, "/api/projects", "get"),
          "401",
          "application/problem+json",
          "api_key_missing",
        ),
        "no global 401 as application/problem+json on GET /api/projects",
      ),
  });
}

/** The OpenAPI document of the envelope server: deprecation, global and catalog errors. */
export async function runOpenApiSteps(api: RunStep): Promise<void> {
  await api({
    title: "OpenAPI: deprecated route, global errors, catalog errors",
    path: "/openapi.json",
    status: 200,
    check: ({ body }) => {
      const list = operation(body, "/api/projects", "get");
      const archive = operation(body, "/api/projects/{id}/archive", "post");
      return expect(operation(body, "/api/v0/projects", "get").deprecated === true, "deprecated") ??
        expect(list.deprecated === undefined, "GET /api/projects marked deprecated") ??
        expect(documents(list, "401", "application/json", "api_key_missing"), "no global 401") ??
        expect(
          ["403", "429", "500", "503"].every((status) => status in bag(list.responses)),
          "global 403/429/500/503 missing",
        ) ??
        expect(
          documents(archive, "409", "application/json", "PROJECT_ALREADY_ARCHIVED"),
          "no catalog 409 on the archive route",
        );
    },
  });
}
