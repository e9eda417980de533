/**
 * Documentation and behaviour agree: for every documented response of the
 * OpenAPI test app (each route's success and route-level errors, and every
 * global error on one route), a real response has that status, the
 * documented content type, a body that validates (Ajv) against the documented
 * schema, and, for errors, a code among the documented examples. Envelope and
 * problem-details modes, Express and Fastify.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { CASES, MODES, openApiDocument, openApiModule, openApiOptions } from "./openapi_app.ts";
import {
  bodyValidator,
  documentedResponse,
  type Json,
  pathTemplate,
} from "./openapi_validation.ts";
import { ADAPTERS, boot } from "../nest/helpers.ts";

const GLOBAL_ROUTE = "GET /catalog/items/{id}";

function globalStatuses(mode: (typeof MODES)[number]): Set<string> {
  const configs = openApiOptions(mode).swagger?.globalErrors ?? [];
  return new Set(
    configs.map((config) => String(typeof config === "number" ? config : config.status)),
  );
}

/** Every documented (operation, status) that a case must cover. */
function requiredResponses(document: Json, globals: Set<string>): string[] {
  const required: string[] = [];
  for (const [template, item] of Object.entries<Json>(document.paths)) {
    for (const [method, operation] of Object.entries<Json>(item)) {
      const route = `${method.toUpperCase()} ${template}`;
      for (const status of Object.keys(operation.responses)) {
        if (globals.has(status) && route !== GLOBAL_ROUTE) continue;
        required.push(`${route} ${status}`);
      }
    }
  }
  return required.sort();
}

function errorCode(body: Json): string | undefined {
  return body.success === false ? body.error?.code : body.code;
}

for (const mode of MODES) {
  describe(`OpenAPI agreement, ${mode} mode`, () => {
    for (const adapter of ADAPTERS) {
      it(`${adapter}: every documented response is what the server sends`, async () => {
        const running = await boot(openApiModule(mode), adapter);
        try {
          const document = openApiDocument(running.app, mode);
          const validate = bodyValidator(document);
          const covered = new Set<string>();
          for (const { method, path, status, headers } of CASES) {
            const label = `${method} ${path} → ${status}`;
            const response = await fetch(running.url + path, { method, headers });
            const body = await response.json();
            assert.equal(response.status, status, `${label}: ${JSON.stringify(body)}`);
            const template = pathTemplate(document, path);
            covered.add(`${method} ${template} ${status}`);
            const documented = documentedResponse(document, template, method, status);
            assert.ok(documented, `${label}: not documented`);
            const contentType = response.headers.get("content-type")?.split(";")[0] ?? "";
            const media = documented.content?.[contentType];
            assert.ok(media, `${label}: ${contentType} not documented`);
            assert.deepEqual(validate(media.schema, body), [], `${label}: ${JSON.stringify(body)}`);
            if (status >= 400) {
              assert.ok(
                Object.keys(media.examples).includes(errorCode(body)!),
                `${label}: code ${errorCode(body)} not among the documented examples`,
              );
            }
          }
          assert.deepEqual(
            requiredResponses(document, globalStatuses(mode)).filter((key) => !covered.has(key)),
            [],
            "documented responses without a request",
          );
        } finally {
          await running.close();
        }
      });
    }

    for (const adapter of ADAPTERS) {
      it(`${adapter}: documented pagination parameters are what the server accepts`, async () => {
        const running = await boot(openApiModule(mode), adapter);
        try {
          const document = openApiDocument(running.app, mode);
          let checked = 0;
          for (const [template, item] of Object.entries<Json>(document.paths)) {
            for (const [method, operation] of Object.entries<Json>(item)) {
              const limit = (operation.parameters ?? []).find((parameter: Json) =>
                parameter.in === "query" && parameter.name === "limit"
              );
              if (limit === undefined) continue;
              const { minimum, maximum, default: fallback } = limit.schema;
              const call = (query: string) =>
                fetch(`${running.url}${template}?${query}`, { method: method.toUpperCase() });
              const limitOf = async (query: string) => {
                const response = await call(query);
                const body = await response.json();
                assert.equal(response.status, 200, `${template}?${query}: ${JSON.stringify(body)}`);
                assert.equal((body.data as unknown[]).length <= body.meta.pagination.limit, true);
                return body.meta.pagination.limit;
              };
              assert.equal(minimum, 1, template);
              if (maximum < Number.MAX_SAFE_INTEGER) {
                assert.equal(await limitOf(`limit=${maximum + 1}`), maximum, template);
                assert.equal(await limitOf(`limit=${maximum}`), maximum, template);
                assert.equal((await call(`limit=${minimum - 1}`)).status, 400, template);
                assert.equal((await call(`limit=${maximum}.5`)).status, 400, template);
                checked++;
              }
              if (fallback !== undefined) assert.equal(await limitOf(""), fallback, template);
              const page = (operation.parameters as Json[]).find((parameter) =>
                parameter.name === "page" || parameter.name === "cursor"
              );
              assert.ok(page, `${template}: page or cursor documented`);
            }
          }
          assert.equal(checked, 2, "routes with a documented maximum (catalog feed, v2 pages)");
        } finally {
          await running.close();
        }
      });
    }

    it("a body that disagrees with its schema fails validation", async () => {
      const running = await boot(openApiModule(mode), "express");
      try {
        const document = openApiDocument(running.app, mode);
        const validate = bodyValidator(document);
        const one = await (await fetch(`${running.url}/catalog/items/1`)).json();
        const list = documentedResponse(document, "/catalog/items", "get", 200);
        assert.notDeepEqual(validate(list.content["application/json"].schema, one), []);
        const error = await (await fetch(`${running.url}/catalog/items/1?fail=404`)).json();
        const success = documentedResponse(document, "/catalog/items/{id}", "get", 200);
        assert.notDeepEqual(validate(success.content["application/json"].schema, error), []);
      } finally {
        await running.close();
      }
    });
  });
}
