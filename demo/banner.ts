/**
 * What the demo prints once at start: where it listens and, in the embedded
 * mode, the demo keys with ready-to-paste `curl` lines. Peppers are never
 * part of it.
 *
 * @module
 */
import { TRIAL_KEY_CREDITS } from "./limits.ts";
import type { DemoKeys } from "./seed.ts";

/** What the banner describes. */
export interface BannerInput {
  /** `http://host:port`. */
  url: string;
  /** `express` or `fastify`. */
  adapter: string;
  /** `memory` or `postgres`. */
  storageKind: "memory" | "postgres";
  /** Whether errors are RFC 9457 problem details. */
  problemDetails: boolean;
  /** The seeded keys, if any. */
  keys: DemoKeys | undefined;
  /** Where the peppers came from. */
  pepperSource: "env" | "random";
  /** Whether the demo serves Swagger UI (`/docs`) and the OpenAPI document (the Nest demo). */
  openapi: boolean;
}

/** `'...'` for a POSIX shell. */
function quote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

function curl(url: string, key: string, extra = ""): string {
  return `curl -s ${quote(url)} -H ${quote(`X-API-Key: ${key}`)}${extra ? ` ${extra}` : ""}`;
}

/** The `curl` lines of the tour, one concept each. */
export function curlLines(url: string, keys: DemoKeys): string[] {
  const json = `-H 'Content-Type: application/json'`;
  return [
    "# offset pagination with sort, filter and links (reader key)",
    curl(`${url}/api/projects?page=2&limit=5&sort=name&order=desc&status=active`, keys.reader.key),
    "# cursor-paginated feed",
    curl(`${url}/api/feed?limit=3`, keys.reader.key),
    "# live-only write: the test key gets 403 api_key_environment_mismatch",
    curl(`${url}/api/projects`, keys.test.key, `${json} -d '{"name":"Project Zephyr"}'`),
    "# the reader key lacks projects:write: 403 api_key_scope_insufficient",
    curl(`${url}/api/projects`, keys.reader.key, `${json} -d '{"name":"Project Zephyr"}'`),
    "# the localhost-only key at work, then refused as another client",
    curl(`${url}/api/whoami`, keys.restricted.key),
    curl(`${url}/api/whoami`, keys.restricted.key, `-H 'X-Forwarded-For: 203.0.113.7'`),
    "# deprecated route: Deprecation and Sunset headers, meta.deprecation",
    curl(`${url}/api/v0/projects`, keys.reader.key, "-i"),
    "# typed error (ProblemType; RFC 9457 body with --problem-details)",
    curl(`${url}/api/projects/prj_999`, keys.reader.key),
    "# rate limit per key: meta.rateLimit counts down, the 4th call in a minute is a 429",
    curl(`${url}/api/ping`, keys.reader.key),
    `# the trial key: ${TRIAL_KEY_CREDITS} credits, no refill; then a 429 api_key_usage_exceeded`,
    curl(`${url}/api/projects?limit=1`, keys.trial.key),
    "# admin: create a key (only scopes the admin key holds) and list the tenant's keys",
    curl(
      `${url}/admin/keys`,
      keys.admin.key,
      `${json} -d '{"name":"ci","scopes":["projects:read"]}'`,
    ),
    curl(`${url}/admin/keys`, keys.admin.key),
    "# admin: rotate the test key (the old one works 1 h more), then revoke the old one now",
    curl(
      `${url}/admin/keys/${keys.test.id}/rotate`,
      keys.admin.key,
      `${json} -d '{"grace":"1h"}'`,
    ),
    curl(`${url}/admin/keys/${keys.test.id}`, keys.admin.key, "-X DELETE"),
    "# another tenant's key id: 404 api_key_record_not_found",
    curl(`${url}/admin/keys/${keys.otherTenant.id}`, keys.admin.key, "-X DELETE"),
  ];
}

/**
 * The start banner.
 *
 * @example
 * ```ts
 * import { formatBanner } from "./banner.ts";
 * formatBanner({
 *   url: "http://127.0.0.1:3000", adapter: "express", storageKind: "memory",
 *   problemDetails: false, keys: undefined, pepperSource: "random", openapi: true,
 * }).includes("/docs"); // true
 * ```
 */
export function formatBanner(input: BannerInput): string {
  const { url, keys } = input;
  const lines = [
    `SafeRoute API kit demo listening on ${url}`,
    `  adapter: ${input.adapter} · storage: ${
      input.storageKind === "memory" ? "in memory" : "PostgreSQL (DATABASE_URL)"
    } · errors: ${input.problemDetails ? "RFC 9457 problem details" : "error envelope"}`,
    `  web page: ${url}/${
      input.openapi ? `   Swagger UI: ${url}/docs   OpenAPI: ${url}/openapi.json` : ""
    }`,
  ];
  if (keys === undefined) {
    lines.push(
      "",
      "No demo keys were created (PostgreSQL mode). Start once with --seed to create them,",
      "then manage keys through /admin/keys with an admin key.",
    );
  } else {
    const lifetime = input.pepperSource === "random"
      ? "a random pepper is made per run, so these keys die with the process"
      : "hashed with the pepper from API_KEY_PEPPERS";
    lines.push(
      "",
      `Demo keys of tenant "${keys.tenantId}" (shown once; ${lifetime}):`,
      `  admin      live  keys:write projects:write feed:read  ${keys.admin.key}`,
      `  reader     live  projects:read feed:read              ${keys.reader.key}`,
      `  test       test  projects:write feed:read             ${keys.test.key}`,
      `  localhost  live  projects:read, from 127.0.0.1 only   ${keys.restricted.key}`,
      `  limited    live  projects:read, 2 requests a minute   ${keys.limited.key}`,
      `  trial      live  ${
        `projects:read, ${TRIAL_KEY_CREDITS} credits in all`.padEnd(37)
      }${keys.trial.key}`,
      `  key id of tenant "${keys.otherTenant.tenantId}" (the admin routes answer 404): ${keys.otherTenant.id}`,
      "",
      "Try:",
      ...curlLines(url, keys).map((line) => `  ${line}`),
    );
  }
  lines.push("", "Ctrl+C stops the server.");
  return lines.join("\n");
}
