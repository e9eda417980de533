/**
 * The scripted tour `--smoke` runs: every feature and every failure code of
 * the demo, against an envelope server and a problem-details server (the
 * parity and OpenAPI steps are in `parity_steps.ts`, the page's
 * `<api-keys-manager>` in Chromium in `page_steps.ts`).
 *
 * @module
 */
import { generateKey } from "../../api_keys/mod.ts";
import {
  hasFilters,
  hasRateLimit,
  hasResponseTime,
  hasSort,
  isCursorPagination,
  isDeprecated,
  isError,
  isOffsetPagination,
  isPaginated,
  isProblemDetailsResponse,
  isSuccess,
} from "../../client/mod.ts";
import { LIMITED_KEY_POLICY, PING_LIMIT } from "../limits.ts";
import { PROJECT_NOT_FOUND_TYPE } from "../resources/projects.ts";
import type { DemoKeys } from "../seed.ts";
import {
  type Bag,
  bag,
  expect,
  formatStep,
  runStep,
  type StepAnswer,
  type StepResult,
  type StepSpec,
} from "./http_step.ts";
import { runOpenApiSteps, runParityProblemSteps, runParitySteps } from "./parity_steps.ts";
import { runLeakSteps } from "./leak_steps.ts";
import { runCreditSteps } from "./credit_steps.ts";
import type { DemoSigner } from "../leaks/test_signer.ts";

/** A server the tour talks to. */
export interface TourTarget {
  /** `http://host:port`. */
  url: string;
  /** Its seeded keys. */
  keys: DemoKeys;
  /** The secret-scanning signer its partner route trusts (leaked-key steps run when given). */
  signer?: DemoSigner;
}

/** Totals of a tour. */
export interface TourSummary {
  /** Every step, in order. */
  results: StepResult[];
  /** Steps that passed. */
  passed: number;
  /** Steps that failed. */
  failed: number;
}

/** The `meta` of a success body (or `undefined`). */
const metaOf = (body: unknown) => isSuccess(body) ? body.meta : undefined;

/** The `data` of a success body (or `{}`). */
const dataOf = (answer: StepAnswer): Bag => bag(bag(answer.body).data);

function hasNoSecrets(record: unknown): boolean {
  const view = bag(record);
  return typeof view.id === "string" && !("hash" in view) && !("pepperVersion" in view);
}

/**
 * What a demo server has beyond the routes both servers share: the Nest one
 * has both, the Fetch one (`demo/fetch/`) neither.
 */
export interface TourFeatures {
  /** `/openapi.json` and `/docs`. */
  openapi: boolean;
  /** Bodies validated by class-validator's `ValidationPipe` (400 with every problem). */
  validationPipe: boolean;
}

/** Runs the tour; `log` receives one line per step. Steps of missing `features` are left out. */
export async function runTour(
  envelope: TourTarget,
  problem: TourTarget,
  log: (line: string) => void,
  features: TourFeatures = { openapi: true, validationPipe: true },
): Promise<TourSummary> {
  const results: StepResult[] = [];
  const record = (result: StepResult) => {
    results.push(result);
    log(formatStep(result));
  };
  const step = async (target: TourTarget, spec: StepSpec): Promise<StepAnswer | undefined> => {
    const result = await runStep(target.url, spec);
    record(result);
    return result.answer;
  };
  const { keys } = envelope;
  const api = (spec: StepSpec) => step(envelope, spec);
  const projectsBody = { name: "Project Zephyr" };

  log("== pagination, sort, filters, links, request ids, response time, rate-limit meta");
  await api({
    title: "offset page 2 with sort, filters and links",
    path: "/api/projects?page=2&limit=5&sort=name&order=desc&status=active",
    key: keys.reader.key,
    headers: { "X-Request-Id": "smoke-tour-1" },
    status: 200,
    check: ({ body, headers }) => {
      if (!isSuccess(body)) return "not a success envelope";
      const meta = body.meta;
      if (!isPaginated(meta) || !isOffsetPagination(meta.pagination)) return "no offset pagination";
      const { page, limit, links } = meta.pagination;
      return expect(page === 2 && limit === 5, "wrong page or limit") ??
        expect(typeof links?.next === "string" && typeof links?.prev === "string", "no links") ??
        expect(hasSort(meta) && meta.sort.field === "name" && meta.sort.order === "desc", "sort") ??
        expect(hasFilters(meta) && meta.filters.status === "active", "filters") ??
        expect(hasResponseTime(meta), "no meta.responseTime") ??
        expect(hasRateLimit(meta), "no meta.rateLimit") ??
        expect(body.requestId === "smoke-tour-1", "request id not echoed in the body") ??
        expect(headers.get("x-request-id") === "smoke-tour-1", "request id not echoed in headers");
    },
  });
  await api({
    title: "limit=500 clamped to maxLimit 50",
    path: "/api/projects?limit=500",
    key: keys.reader.key,
    status: 200,
    check: ({ body }) => {
      const meta = metaOf(body);
      return expect(
        isPaginated(meta) && isOffsetPagination(meta.pagination) && meta.pagination.limit === 50,
        "page size not clamped to 50",
      );
    },
  });
  await api({
    title: "limit=0 refused before the handler, naming the parameter",
    path: "/api/projects?limit=0",
    key: keys.reader.key,
    status: 400,
    code: "INVALID_PAGINATION_QUERY",
  });
  const feed = await api({
    title: "cursor-paginated feed, first page",
    path: "/api/feed?limit=3",
    key: keys.reader.key,
    status: 200,
    check: ({ body }) => {
      const meta = metaOf(body);
      return expect(
        isPaginated(meta) && isCursorPagination(meta.pagination) && meta.pagination.hasMore &&
          typeof meta.pagination.nextCursor === "string",
        "no cursor pagination with a next cursor",
      );
    },
  });
  const feedMeta = metaOf(feed?.body);
  const nextCursor = isPaginated(feedMeta) && isCursorPagination(feedMeta.pagination)
    ? feedMeta.pagination.nextCursor
    : null;
  await api({
    title: "feed, next page by cursor",
    path: `/api/feed?limit=3&cursor=${encodeURIComponent(nextCursor ?? "missing")}`,
    key: keys.reader.key,
    status: 200,
    check: ({ body }) => {
      const meta = metaOf(body);
      return expect(
        isPaginated(meta) && isCursorPagination(meta.pagination) &&
          typeof meta.pagination.previousCursor === "string",
        "second page has no previous cursor",
      );
    },
  });
  await api({
    title: "a cursor the feed never issued",
    path: "/api/feed?cursor=OTk5",
    key: keys.reader.key,
    status: 400,
    code: "INVALID_CURSOR",
  });

  log("== admin routes (the library's ./api-keys/admin): create, use, rotate, revoke");
  const created = await api({
    title: "create a projects:read key",
    method: "POST",
    path: "/admin/keys",
    key: keys.admin.key,
    body: { name: "smoke reader", scopes: ["projects:read"] },
    status: 201,
    check: ({ body }) =>
      expect(typeof bag(body).key === "string", "no raw key") ??
        expect(hasNoSecrets(bag(body).record), "record missing or exposes hash/pepperVersion"),
  });
  const newId = String(bag(bag(created?.body).record).id ?? "missing");
  const newKey = String(bag(created?.body).key ?? "missing");
  await api({
    title: "use the new key",
    path: "/api/projects?limit=2",
    key: newKey,
    status: 200,
  });
  await api({
    title: "grant a scope the admin key lacks",
    method: "POST",
    path: "/admin/keys",
    key: keys.admin.key,
    body: { name: "too much", scopes: ["billing:read"] },
    status: 403,
    code: "api_key_escalation_refused",
  });
  const keysOf = (answer: StepAnswer | undefined) => {
    const list = bag(answer?.body).keys;
    return Array.isArray(list) ? list : [];
  };
  const before = await api({
    title: "list the tenant's keys (public view)",
    path: "/admin/keys",
    key: keys.admin.key,
    status: 200,
    check: (answer) =>
      expect(
        keysOf(answer).length > 0 && keysOf(answer).every(hasNoSecrets),
        "list missing or exposing hash/pepperVersion",
      ),
  });
  await api({
    title: "invalid body: refused, naming the field",
    method: "POST",
    path: "/admin/keys",
    key: keys.admin.key,
    body: { name: "", scopes: ["projects:read"], tenantId: "other" },
    status: 400,
    code: "api_key_invalid_input",
    check: ({ body }) =>
      expect(bag(bag(bag(body).error).details).field === "body", "no field named"),
  });
  await api({
    title: "nothing was written",
    path: "/admin/keys",
    key: keys.admin.key,
    status: 200,
    check: (answer) => expect(keysOf(answer).length === keysOf(before).length, "key count changed"),
  });
  const rotated = await api({
    title: "rotate the new key with no grace",
    method: "POST",
    path: `/admin/keys/${newId}/rotate`,
    key: keys.admin.key,
    body: { grace: "none" },
    status: 201,
    check: ({ body }) =>
      expect(bag(body).replacedKeyId === newId, "replacedKeyId is not the old id"),
  });
  const rotatedId = String(bag(bag(rotated?.body).record).id ?? "missing");
  const rotatedKey = String(bag(rotated?.body).key ?? "missing");
  await api({
    title: "the old key after a zero grace",
    path: "/api/projects",
    key: newKey,
    status: 401,
    code: "api_key_expired",
  });
  await api({ title: "the new key", path: "/api/projects", key: rotatedKey, status: 200 });
  await api({
    title: "rename the new key",
    method: "PATCH",
    path: `/admin/keys/${rotatedId}`,
    key: keys.admin.key,
    body: { name: "smoke reader, renamed" },
    status: 200,
    check: ({ body }) => expect(bag(body).name === "smoke reader, renamed", "not renamed"),
  });
  await api({
    title: "revoke the new key",
    method: "DELETE",
    path: `/admin/keys/${rotatedId}`,
    key: keys.admin.key,
    status: 200,
    check: ({ body }) => expect(bag(body).status === "revoked", "status is not revoked"),
  });
  await api({
    title: "the revoked key",
    path: "/api/projects",
    key: rotatedKey,
    status: 401,
    code: "api_key_revoked",
  });
  await api({
    title: "another tenant's key id",
    method: "DELETE",
    path: `/admin/keys/${keys.otherTenant.id}`,
    key: keys.admin.key,
    status: 404,
    code: "api_key_record_not_found",
  });
  await api({
    title: "admin routes with the reader key",
    path: "/admin/keys",
    key: keys.reader.key,
    status: 403,
    code: "api_key_scope_insufficient",
  });

  log("== the page's <api-keys-manager> in Chromium: create, use, last used, revoke");
  // Loaded here: `deno task demo` itself never loads playwright-core, and `npm start`'s light
  // install (demo/start.json) has none: there the page steps are skipped (never under CI).
  const pageSteps = await import("./page_steps.ts").catch((error) => {
    // Only a missing playwright-core is skipped (never under CI); any other failure is a bug.
    if (Deno.env.get("CI") === "true" || !String(error?.message).includes("playwright-core")) {
      throw error;
    }
    log(
      "skip page steps: this install has no playwright-core (npm start's light one); " +
        "`deno task demo --smoke` runs them, with Chromium (scripts/install_chromium.sh)",
    );
    return undefined;
  });
  const pageKey = await pageSteps?.runPageSteps(envelope.url, record, log);
  if (pageKey !== undefined) {
    await api({
      title: "the key revoked through the element",
      path: "/api/projects/prj_001",
      key: pageKey,
      status: 401,
      code: "api_key_revoked",
    });
  }

  log("== key failures, environments, IP allowlist");
  await api({ title: "no key", path: "/api/projects", status: 401, code: "api_key_missing" });
  await api({
    title: "a malformed key",
    path: "/api/projects",
    key: "not-a-key",
    status: 401,
    code: "api_key_malformed",
  });
  await api({
    title: "a well-formed unknown key",
    path: "/api/projects",
    key: generateKey({ environment: "live", namespace: "ak" }).raw,
    status: 401,
    code: "api_key_invalid",
  });
  await api({
    title: "live-only write with the test key",
    method: "POST",
    path: "/api/projects",
    key: keys.test.key,
    body: projectsBody,
    status: 403,
    code: "api_key_environment_mismatch",
  });
  await api({
    title: "write with the read-only key",
    method: "POST",
    path: "/api/projects",
    key: keys.reader.key,
    body: projectsBody,
    status: 403,
    code: "api_key_scope_insufficient",
  });
  await api({
    title: "live write with projects:write",
    method: "POST",
    path: "/api/projects",
    key: keys.admin.key,
    body: projectsBody,
    status: 201,
    code: "PROJECT_CREATED",
  });
  await api({
    title: "localhost-only key from 127.0.0.1",
    path: "/api/whoami",
    key: keys.restricted.key,
    status: 200,
    check: (answer) => expect(dataOf(answer).clientIp === "127.0.0.1", "clientIp not 127.0.0.1"),
  });
  await api({
    title: "localhost-only key from 203.0.113.7 (via the loopback proxy)",
    path: "/api/whoami",
    key: keys.restricted.key,
    headers: { "X-Forwarded-For": "203.0.113.7" },
    status: 403,
    code: "api_key_ip_not_allowed",
  });

  log("== deprecation, typed errors, rate limit");
  await api({
    title: "deprecated route",
    path: "/api/v0/projects",
    key: keys.reader.key,
    status: 200,
    check: ({ body, headers }) =>
      expect(headers.has("deprecation"), "no Deprecation header") ??
        expect(headers.has("sunset"), "no Sunset header") ??
        expect(isSuccess(body) && isDeprecated(body.meta), "no meta.deprecation"),
  });
  await api({
    title: "unknown project: error envelope",
    path: "/api/projects/prj_999",
    key: keys.reader.key,
    status: 404,
    code: "PROJECT_NOT_FOUND",
    check: ({ body }) => expect(isError(body), "not an error envelope"),
  });
  await api({ title: "unknown route", path: "/api/nothing-here", status: 404, code: "NOT_FOUND" });
  for (let call = 1; call <= PING_LIMIT; call++) {
    await api({
      title: `rate-limited route, call ${call} of ${PING_LIMIT}`,
      path: "/api/ping",
      key: keys.test.key,
      status: 200,
      check: ({ body }) => {
        const meta = metaOf(body);
        return expect(
          hasRateLimit(meta) && meta.rateLimit.remaining === PING_LIMIT - call,
          `meta.rateLimit.remaining is not ${PING_LIMIT - call}`,
        );
      },
    });
  }
  await api({
    title: "one call too many",
    path: "/api/ping",
    key: keys.test.key,
    status: 429,
    code: "TOO_MANY_REQUESTS",
    check: ({ body }) =>
      expect(
        isError(body) && hasRateLimit(body.meta) &&
          typeof body.meta.rateLimit.retryAfter === "number",
        "no meta.rateLimit with retryAfter",
      ) ??
        expect(
          isError(body) && hasRateLimit(body.meta) && body.meta.rateLimit.limit === PING_LIMIT &&
            body.meta.rateLimit.remaining === 0,
          `meta.rateLimit is not the policy that refused (${PING_LIMIT} a minute, 0 remaining)`,
        ),
  });
  await api({
    title: "the limit is per key: the reader key still passes",
    path: "/api/ping",
    key: keys.reader.key,
    status: 200,
  });
  const { name, limit } = LIMITED_KEY_POLICY;
  for (let call = 1; call <= limit; call++) {
    await api({
      title: `the key's own policy "${name}" (${limit} a minute), call ${call}: RateLimit fields`,
      path: "/api/projects",
      key: keys.limited.key,
      status: 200,
      check: ({ headers }) =>
        expect(
          headers.get("ratelimit-policy") === `"${name}";q=${limit};w=60`,
          "RateLimit-Policy",
        ) ??
          expect(
            new RegExp(`^"${name}";r=${limit - call};t=\\d+$`).test(headers.get("ratelimit") ?? ""),
            `RateLimit does not say r=${limit - call}`,
          ),
    });
  }
  await api({
    title: `the key's policy is spent: 429 with Retry-After and meta.rateLimit`,
    path: "/api/projects",
    key: keys.limited.key,
    status: 429,
    code: "api_key_rate_limited",
    check: ({ body, headers }) =>
      expect(headers.has("retry-after"), "no Retry-After") ??
        expect(/;r=0;/.test(headers.get("ratelimit") ?? ""), "RateLimit does not say r=0") ??
        expect(
          isError(body) && hasRateLimit(body.meta) && body.meta.rateLimit.remaining === 0 &&
            typeof body.meta.rateLimit.retryAfter === "number",
          "no meta.rateLimit with remaining 0 and retryAfter",
        ),
  });

  log("== credits: the trial key spends its credits, then 429");
  await runCreditSteps(api, envelope.url, keys, record);

  log("== problem details (a second server started with --problem-details)");
  await step(problem, {
    title: "unknown project: RFC 9457 with the route's ProblemType",
    path: "/api/projects/prj_999",
    key: problem.keys.reader.key,
    status: 404,
    code: "PROJECT_NOT_FOUND",
    check: ({ body, headers }) =>
      expect(isProblemDetailsResponse(body), "not problem details") ??
        expect(bag(body).type === PROJECT_NOT_FOUND_TYPE, "type is not the route's ProblemType") ??
        expect(
          headers.get("content-type")?.startsWith("application/problem+json") === true,
          "content type is not application/problem+json",
        ),
  });
  await step(problem, {
    title: "no key: problem details from the guard",
    path: "/api/projects",
    status: 401,
    code: "api_key_missing",
    check: ({ body }) => expect(isProblemDetailsResponse(body), "not problem details"),
  });
  if (features.validationPipe) {
    await step(problem, {
      title: "invalid body: problem details with details",
      method: "POST",
      path: "/api/projects",
      key: problem.keys.admin.key,
      body: { status: "archived" },
      status: 400,
      check: ({ body }) =>
        expect(
          isProblemDetailsResponse(body) && Array.isArray(bag(body).details),
          "no problem details with details",
        ),
    });
  }
  log("== web page and OpenAPI");
  await api({
    title: "web page",
    path: "/",
    status: 200,
    check: ({ body, headers }) =>
      expect(headers.get("content-type")?.includes("text/html") === true, "not HTML") ??
        expect(String(body).includes("/page.js"), "page script missing"),
  });
  await api({
    title: "client bundle",
    path: "/client.js",
    status: 200,
    check: ({ body }) => expect(String(body).includes("isSuccess"), "bundle lacks isSuccess"),
  });
  await api({
    title: "element bundle: <api-keys-manager>",
    path: "/elements.js",
    status: 200,
    check: ({ body }) => expect(String(body).includes("api-keys-manager"), "no element defined"),
  });
  await api({
    title: "the page's session: the admin key for its element (on loopback)",
    path: "/page-session",
    status: 200,
    check: ({ body, headers }) =>
      expect(bag(body).token === keys.admin.key, "not the admin key") ??
        expect(headers.get("cache-control") === "no-store", "cacheable"),
  });
  if (features.openapi) {
    await api({
      title: "OpenAPI document",
      path: "/openapi.json",
      status: 200,
      check: ({ body }) =>
        expect(typeof bag(bag(body).paths)["/admin/keys"] === "object", "no /admin/keys path"),
    });
    await api({ title: "Swagger UI", path: "/docs", status: 200 });
    await runOpenApiSteps(api);
  }

  log("== field selection, error catalog, API version");
  await runParitySteps(api, keys);
  await runParityProblemSteps((spec) => step(problem, spec), problem.keys, features.openapi);

  if (envelope.signer !== undefined) {
    log("== leaked keys: public report, secret-scanning partner");
    await runLeakSteps(api, envelope.url, keys, envelope.signer);
  }

  const failed = results.filter((result) => result.failure !== undefined).length;
  return { results, passed: results.length - failed, failed };
}
