/**
 * The migrated app of ./app.ts on Express and Fastify: the shared scenario suite
 * (tests/scenarios), keys made by `@nestarc/api-keys`' algorithm, the envelope behaviours its
 * clients rely on, the behaviours that differ by design (docs/migration.md, as a client sees
 * them), and its OpenAPI document under the component names of `@nestarc/safe-response`.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import SwaggerParser from "@apidevtools/swagger-parser";
import { ApiKeysService } from "@saferoute/api-kit/api-keys";
import { ADAPTERS, boot, getJson, type RunningApp } from "../safe_response/nest/helpers.ts";
import { nestarcHash, nestarcKey } from "../api_keys/verify/nestarc.ts";
import { NEST_CAPABILITIES, unknownKey } from "../scenarios/nest_app.ts";
import { SCENARIO_TENANT, seedScenarioKeys } from "../scenarios/spec.ts";
import { scenarioSuite } from "../scenarios/suite.ts";
import { appModule, buildDocument, errors, HttpErrorAudit, OLD_PEPPER, OWN_LIMITS } from "./app.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const range = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** The ids of every page reached by following `links.next` from `path`. */
async function follow(url: string, path: string): Promise<number[]> {
  const ids: number[] = [];
  for (let next: string | null = path, pages = 0; next !== null && pages < 20; pages++) {
    const { body } = await getJson(url, next);
    ids.push(...(body.data as Json[]).map((user) => user.id));
    next = (body.meta as Json).pagination.links.next;
  }
  return ids;
}

/** The app's own models (the users API's, and the scenario routes' body). */
/** The app's models, and their copies field selection documents without `required`. */
const APP_MODELS = ["UserDto", "NameDto", "UserDtoSelection"];

for (const adapter of ADAPTERS) {
  scenarioSuite(`scenarios: the migrated app on ${adapter}`, NEST_CAPABILITIES, async (mode) => {
    const running = await boot(appModule(mode), adapter);
    const keys = await seedScenarioKeys(running.app.get(ApiKeysService), unknownKey());
    return { url: running.url, keys, close: running.close };
  });
}

/** The component (DTO) names of `@nestarc/safe-response` 0.14 its users' generated clients know. */
const DTO_NAMES = [
  "SafeSuccessResponseDto",
  "SafeErrorResponseDto",
  "ErrorDetailDto",
  "ErrorResponseMetaDto",
  "ResponseMetaDto",
  "PaginationMetaDto",
  "PaginationLinksDto",
  "CursorPaginationMetaDto",
  "SortMetaDto",
  "DeprecationMetaDto",
  "RateLimitMetaDto",
  "ProblemDetailsDto",
];

for (const adapter of ADAPTERS) {
  describe(`migrated @nestarc/safe-response app (${adapter})`, () => {
    let app: RunningApp;
    before(async () => app = await boot(appModule("envelope"), adapter));
    after(() => app.close());

    it("verifies a key issued by @nestarc/api-keys and re-hashes it on first use", async () => {
      const service = app.app.get(ApiKeysService);
      const old = nestarcKey("ak", "live");
      const imported = await service.importKeys([{
        tenantId: SCENARIO_TENANT,
        name: "issued by @nestarc/api-keys",
        environment: "live",
        prefix: old.prefix,
        hash: nestarcHash(old.secret, OLD_PEPPER),
        hashScheme: "sha256-pepper",
        pepperVersion: 1,
        scopes: ["orders:read"],
        createdAt: "2025-03-01T10:00:00.000Z",
      }]);
      assert.equal(imported.imported, 1);
      const whoami = await getJson(app.url, "/whoami", { headers: { "x-api-key": old.raw } });
      assert.equal(whoami.status, 200, JSON.stringify(whoami.body));
      assert.deepEqual(whoami.body.data, {
        tenantId: SCENARIO_TENANT,
        environment: "live",
        scopes: ["orders:read"],
      });
      // Upgraded off the request path: wait until no record has the old scheme.
      for (let i = 0; i < 100 && (await service.hashReport()).toUpgrade > 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.equal((await service.hashReport()).toUpgrade, 0, "re-hashed on first use");
      const items = await getJson(app.url, "/items", { headers: { "x-api-key": old.raw } });
      assert.equal(items.status, 200);
      const wrong = `${old.raw.slice(0, -1)}${old.raw.endsWith("A") ? "B" : "A"}`;
      const refused = await getJson(app.url, "/whoami", { headers: { "x-api-key": wrong } });
      assert.equal(refused.status, 401);
    });

    it("wraps a result in the success envelope, with the request id", async () => {
      const { status, headers, body } = await getJson(app.url, "/users/1");
      assert.equal(status, 200);
      assert.equal(typeof body.requestId, "string");
      assert.equal(headers.get("x-request-id"), body.requestId);
      assert.equal(typeof body.timestamp, "string");
      assert.deepEqual(body, {
        success: true,
        statusCode: 200,
        requestId: body.requestId,
        data: { id: 1, name: "Ada" },
        meta: {
          apiVersion: "1",
          responseTime: (body.meta as { responseTime: number }).responseTime,
        },
        timestamp: body.timestamp,
        path: "/users/1",
      });
    });

    it("computes offset and cursor pagination meta", async () => {
      const page = await getJson(app.url, "/users?page=2&limit=1");
      assert.deepEqual(page.body.data, [{ id: 2, name: "Grace" }]);
      assert.deepEqual((page.body.meta as Record<string, unknown>).pagination, {
        type: "offset",
        page: 2,
        limit: 1,
        total: 3,
        totalPages: 3,
        hasNext: true,
        hasPrev: true,
      });
      const feed = await getJson(app.url, "/users/feed");
      assert.deepEqual((feed.body.meta as Record<string, unknown>).pagination, {
        type: "cursor",
        nextCursor: "c2",
        previousCursor: null,
        hasMore: true,
        limit: 2,
      });
    });

    // Handlers written for 0.14: they read @Query() and page by their own size.

    for (const path of ["/people", "/people/endpoint"]) {
      it(`${path}: meta, links and Link header describe the page the handler sent`, async () => {
        const { headers, body } = await getJson(app.url, `${path}?page=2`);
        const { links, ...pagination } = (body.meta as Json).pagination;
        assert.deepEqual(pagination, {
          type: "offset",
          page: 2,
          limit: OWN_LIMITS.offset,
          total: 100,
          totalPages: 5,
          hasNext: true,
          hasPrev: true,
        });
        assert.deepEqual((body.data as Json[]).map((user) => user.id), range(21, 40));
        assert.equal(links.next, `${path}?page=3&limit=20`);
        assert.equal(links.last, `${path}?page=5&limit=20`);
        const link = headers.get("link") ?? "";
        assert.match(link, new RegExp(`<${path}\\?page=3&limit=20>; rel="next"`));
        assert.match(link, new RegExp(`<${path}\\?page=5&limit=20>; rel="last"`));
        assert.deepEqual(
          await follow(app.url, path),
          range(1, 100),
          "following next misses nothing",
        );
      });
    }

    for (const path of ["/people/feed", "/people/endpoint-feed"]) {
      it(`${path}: cursor meta, links and Link header describe the page the handler sent`, async () => {
        const { headers, body } = await getJson(app.url, path);
        const { links, ...pagination } = (body.meta as Json).pagination;
        assert.deepEqual(pagination, {
          type: "cursor",
          nextCursor: "10",
          previousCursor: null,
          hasMore: true,
          limit: OWN_LIMITS.cursor,
        });
        assert.equal(links.next, `${path}?cursor=10&limit=10`);
        assert.match(
          headers.get("link") ?? "",
          new RegExp(`<${path}\\?cursor=10&limit=10>; rel="next"`),
        );
        assert.deepEqual(
          await follow(app.url, path),
          range(1, 100),
          "following next misses nothing",
        );
      });
    }

    it("SafeEndpoint's fieldSelection: false and its own maxFields, over the module option", async () => {
      const whole = await getJson(app.url, "/people/whole/1?fields=id");
      assert.deepEqual(whole.body.data, { id: 1, name: "P1" });
      assert.equal((whole.body.meta as Json).fields, undefined);
      const brief = await getJson(app.url, "/people/brief/1?fields=name,id");
      assert.deepEqual(brief.body.data, { name: "P1" });
      assert.deepEqual((brief.body.meta as Json).fields, ["name"]);
    });

    it("applies SuccessCode and ResponseMessage", async () => {
      const { status, body } = await getJson(app.url, "/users?email=a@b.c", { method: "POST" });
      assert.equal(status, 201);
      assert.equal(body.code, "USER_CREATED");
      assert.equal((body.meta as Record<string, unknown>).message, "User created");
      assert.deepEqual(body.data, { id: 4, name: "a@b.c" });
    });

    it("sends validation messages as details of `Validation failed`", async () => {
      const { status, body } = await getJson(app.url, "/users", { method: "POST" });
      assert.equal(status, 400);
      assert.deepEqual(body.error, {
        code: "BAD_REQUEST",
        message: "Validation failed",
        details: ["email must be an email"],
      });
    });

    it("answers a thrown catalog key with its status, message and details, code = key", async () => {
      HttpErrorAudit.seen.length = 0;
      const missing = await getJson(app.url, "/users/99");
      assert.equal(missing.status, errors.USER_NOT_FOUND.status);
      assert.equal(missing.body.success, false);
      assert.equal(missing.body.path, "/users/99");
      assert.deepEqual(missing.body.error, { code: "USER_NOT_FOUND", message: "User not found" });
      const taken = await getJson(app.url, "/users?email=taken@example.com", { method: "POST" });
      assert.equal(taken.status, 409);
      assert.deepEqual(taken.body.error, {
        code: "EMAIL_TAKEN",
        message: "Email already registered",
        details: { field: "email" },
      });
      // The app's own interceptor sees an HttpException with the catalog status, not an
      // unknown error (the key is in one defined catalog).
      assert.deepEqual(HttpErrorAudit.seen, ["HttpException 404", "HttpException 409"]);
    });

    it("passes a RawResponse route through", async () => {
      assert.deepEqual((await getJson(app.url, "/users/health")).body, { status: "ok" });
    });

    // Behaviours that differ by design (docs/migration.md), as a client sees them:

    it("Deprecation is an RFC 9745 date (`@0` without `since`), not `true`", async () => {
      const { headers, body } = await getJson(app.url, "/users/legacy");
      assert.equal(headers.get("deprecation"), "@0");
      assert.equal(headers.get("sunset"), "Tue, 01 Jan 2030 00:00:00 GMT");
      assert.match(headers.get("link") ?? "", /<\/users>; rel="deprecation"/);
      assert.deepEqual((body.meta as Record<string, unknown>).deprecation, {
        deprecated: true,
        sunset: "2030-01-01T00:00:00.000Z",
        link: "/users",
      });
    });

    it("a handler returning undefined sends `data: null` (not an envelope without data)", async () => {
      const { body } = await getJson(app.url, "/users/nothing");
      assert.equal(Object.hasOwn(body, "data"), true);
      assert.equal(body.data, null);
    });

    it("an unexpected error is `Internal Server Error` and leaks nothing", async () => {
      const { status, body } = await getJson(app.url, "/users/crash");
      assert.equal(status, 500);
      assert.deepEqual(body.error, {
        code: "INTERNAL_SERVER_ERROR",
        message: "Internal Server Error",
      });
      assert.doesNotMatch(JSON.stringify(body), /hunter2|postgres/);
    });

    it("a key missing from the catalog is a plain 500 (its key is not sent as the code)", async () => {
      const { status, body } = await getJson(app.url, "/users/unknown-key");
      assert.equal(status, 500);
      assert.deepEqual(body.error, {
        code: "INTERNAL_SERVER_ERROR",
        message: "Internal Server Error",
      });
    });
  });
}

describe('migrated app\'s OpenAPI document, schemaNames: "dto"', () => {
  let documents: Json[];
  before(async () => {
    documents = [];
    for (const adapter of ADAPTERS) {
      const running = await boot(appModule("envelope"), adapter);
      try {
        documents.push(buildDocument(running.app));
      } finally {
        await running.close();
      }
    }
  });

  it("is the same on both adapters and valid OpenAPI", async () => {
    assert.deepEqual(documents[1], documents[0]);
    await SwaggerParser.validate(structuredClone(documents[0]));
  });

  it("names the components as @nestarc/safe-response did", () => {
    const names = Object.keys(documents[0].components.schemas);
    assert.deepEqual(
      names.filter((name) => !APP_MODELS.includes(name)).sort(),
      [...DTO_NAMES].sort(),
    );
    const text = JSON.stringify(documents[0]);
    for (const ref of text.matchAll(/"#\/components\/schemas\/(\w+)"/g)) {
      assert.ok(DTO_NAMES.includes(ref[1]) || APP_MODELS.includes(ref[1]), ref[1]);
    }
  });

  it("keeps route schemas as allOf [SafeSuccessResponseDto, { data }]", () => {
    const { paths } = documents[0];
    const ok = paths["/users/{id}"].get.responses["200"].content["application/json"].schema;
    assert.deepEqual(ok.allOf[0], { $ref: "#/components/schemas/SafeSuccessResponseDto" });
    assert.deepEqual(ok.allOf[1].properties.data, { $ref: "#/components/schemas/UserDto" });
    const list = paths["/users"].get.responses["200"].content["application/json"].schema;
    assert.deepEqual(list.allOf[0], { $ref: "#/components/schemas/SafeSuccessResponseDto" });
    assert.match(JSON.stringify(list), /#\/components\/schemas\/PaginationMetaDto/);
    const missing = paths["/users/{id}"].get.responses["404"];
    assert.equal(missing.description, errors.USER_NOT_FOUND.description);
    assert.deepEqual(missing.content["application/json"].schema, {
      $ref: "#/components/schemas/SafeErrorResponseDto",
    });
  });
});
