/**
 * A stand-in for the admin routes (`./api-keys/admin`) and a page holding
 * `<api-keys-manager base-url="/admin">`, on 127.0.0.1: in-memory keys, every
 * request recorded, failures on demand. The element's browser tests run
 * against it.
 *
 * @module
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { MAX_API_KEY_NAME_LENGTH } from "../../api_keys/types.ts";

/** A key as the fake lists it. */
export interface FakeKey {
  id: string;
  name: string;
  prefix: string;
  environment: string;
  scopes: string[];
  status: string;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  credits?: number;
  creditsRefillAmount?: number | null;
  creditsNextRefillAt?: string | null;
  creditsSharedBy?: "tenant";
  replacedByKeyId?: string | null;
  replacesKeyId?: string | null;
}

/** One recorded request. */
export interface Recorded {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage["headers"];
  body: unknown;
}

/** A record of the audit log as `GET /admin/audit` answers it (the fields the element reads). */
export interface FakeAuditRecord {
  seq: number;
  at: string;
  action: string;
  actor: string;
  keyId: string | null;
  prefix: string | null;
  outcome: "success" | "refused";
}

/** The running fake. */
export interface AdminFake {
  origin: string;
  keys: FakeKey[];
  requests: Recorded[];
  /** Answer `GET /admin/keys` with a 503 envelope. */
  failList: boolean;
  /** Milliseconds `GET /admin/keys` waits before answering. */
  listDelayMs: number;
  /** Answer every admin request with this status (an envelope), or drop the connection. */
  failAll: 401 | 403 | 500 | 502 | "network" | null;
  /** The next `times` requests of `method` `path` answer 429, with `Retry-After` when not `null`. */
  rateLimit: { method: string; path: string; times: number; retryAfter: string | null } | null;
  /** Paths whose `POST`, `PATCH` and `DELETE` answer 403 `forbidden` (`canManage` refusing one key). */
  forbidden: string[];
  /** `GET /admin/config`, editable per test. */
  config: Record<string, unknown>;
  /** `tenantCredits` of the list answer. */
  tenantCredits: Record<string, unknown> | null;
  /** Fields of each key created or rotated from now on (its credits, say). */
  newKeyFields: Partial<FakeKey>;
  /** `GET /admin/audit` answers 501 (a server without the audit log). */
  auditMissing: boolean;
  /** Set: replaces the rotate answer's `graceExpiresAt` (a malformed reply; the rotation happens). */
  rotateGraceExpiresAt: unknown;
  /** Create and rotate answers carry no `key` (the secret lost on the way; the key made all the same). */
  omitSecret: boolean;
  /** How far the server's clock is ahead of the browser's at a rotation (default 0). */
  serverAheadMs: number;
  /** Every secret handed out. */
  secrets: string[];
  /**
   * The next requests of `"METHOD /path"` are answered after these milliseconds, one each in
   * turn; the action itself happens at once (a slow answer, not a slow action).
   */
  delays: Record<string, number[]>;
  /**
   * The next request of each `"METHOD /path"` listed happens, then its connection is dropped
   * unanswered (a reply lost, as a timeout loses it); each entry is used once.
   */
  lost: string[];
  /**
   * The next request of each `"METHOD /path"` listed happens, then a gateway answers it with its
   * own 504 HTML page (its upstream too slow); each entry is used once.
   */
  gateway: string[];
  /** The audit log, oldest first: each create, rotate, rename and revoke appends (actor `alice`). */
  audit: FakeAuditRecord[];
  close(): Promise<void>;
}

/** The CSRF header this fake demands: not the default, so the element must read it from config. */
export const FAKE_CSRF = { header: "X-Keys-Intent", value: "manage" };

/** The default `GET /admin/config`: the contract of issue 43. */
export const FAKE_CONFIG = {
  scopes: [
    { scope: "orders:read", description: "List and read orders" },
    { scope: "orders:write" },
    { scope: "invoices:read" },
  ],
  environments: ["live", "test"],
  gracePresets: ["none", "1h", "24h", "7d"],
  expiryPresets: ["7d", "30d", "90d", "1y", "never"],
  defaultExpiry: "90d",
  defaultGrace: "1h",
  capabilities: { rename: true, conditionalRename: true, usage: true },
  can: { create: true, rename: true, rotate: true, revoke: true, audit: false },
  limits: {
    policies: [{ name: "per-minute", limit: 600, windowMs: 60_000 }],
    credits: { amount: 10_000, refillAmount: 10_000, refillEvery: "30d" },
  },
  csrf: FAKE_CSRF,
};

/** The host page: `/` (light), `/fr`, `/dark` (a dark host page: `color-scheme: dark`). */
const PAGE = (lang: string, dark: boolean) =>
  `<!doctype html>
<html lang="${lang}">
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API keys</title>
<style>body{margin:0;padding:8px}${
    dark ? ":root{color-scheme:dark;background:#010409;color:#f0f6fc}" : ""
  }</style>
<main><h1>Settings</h1><api-keys-manager base-url="/admin"></api-keys-manager></main>
<script type="module" src="/elements.js"></script>`;

/** Starts the fake serving `bundle` as `/elements.js`. */
export function startAdminFake(bundle: string): Promise<AdminFake> {
  let next = 1;
  const now = Date.now();
  const fake: AdminFake = {
    origin: "",
    keys: [],
    requests: [],
    failList: false,
    listDelayMs: 0,
    failAll: null,
    rateLimit: null,
    forbidden: [],
    config: structuredClone(FAKE_CONFIG),
    tenantCredits: null,
    newKeyFields: {},
    rotateGraceExpiresAt: undefined,
    omitSecret: false,
    serverAheadMs: 0,
    secrets: [],
    delays: {},
    lost: [],
    gateway: [],
    audit: [],
    auditMissing: false,
    close: () => new Promise((done) => server.close(() => done())),
  };
  const json = (status: number, body: unknown) => [status, JSON.stringify(body)] as const;
  const error = (status: number, code: string, message: string) =>
    json(status, { success: false, statusCode: status, error: { code, message } });
  const record = (action: string, key: FakeKey) =>
    fake.audit.push({
      seq: fake.audit.length + 1,
      at: new Date().toISOString(),
      action,
      actor: "alice",
      keyId: key.id,
      prefix: key.prefix,
      outcome: "success",
    });
  /** `GET /admin/audit`: newest first, `keyId` filter, the cursor an offset. */
  const audit = (query: URLSearchParams) => {
    const keyId = query.get("keyId");
    const limit = Math.min(100, Number(query.get("limit") ?? 25));
    const offset = Number(query.get("cursor") ?? 0);
    const matching = fake.audit.filter((r) => !keyId || r.keyId === keyId).reverse();
    const more = offset + limit < matching.length;
    return json(200, {
      records: matching.slice(offset, offset + limit),
      nextCursor: more ? String(offset + limit) : null,
    });
  };
  const issue = (name: string, environment: string, scopes: string[], expiresAt: string | null) => {
    const id = `k${next++}`;
    const prefix = `sk_${environment}_${id}x`;
    const secret = `${prefix}_${crypto.randomUUID().replaceAll("-", "")}`;
    fake.secrets.push(secret);
    const key: FakeKey = {
      id,
      name,
      prefix,
      environment,
      scopes,
      status: "active",
      createdAt: new Date(now).toISOString(),
      lastUsedAt: null,
      expiresAt,
      ...fake.newKeyFields,
    };
    fake.keys.push(key);
    return fake.omitSecret ? { record: key } : { key: secret, record: key };
  };
  /**
   * `GET /admin/keys`: filters, `sort` (newest first), `limit` from the cursor (an offset); a `q`
   * longer than the server takes is refused as the server refuses it.
   */
  const list = (query: URLSearchParams) => {
    const q = (query.get("q") ?? "").toLowerCase();
    if (q.length > MAX_API_KEY_NAME_LENGTH) {
      return error(400, "invalid_query", `q must be at most ${MAX_API_KEY_NAME_LENGTH} characters`);
    }
    const status = query.get("status") ?? "";
    const environment = query.get("environment") ?? "";
    const limit = Math.min(100, Number(query.get("limit") ?? 25));
    const offset = Number(query.get("cursor") ?? 0);
    const matching = fake.keys.filter((key) =>
      (status === "all" || (status === "" ? key.status !== "revoked" : key.status === status)) &&
      (environment === "" || key.environment === environment) &&
      (q === "" || key.name.toLowerCase().includes(q) || key.prefix.toLowerCase().startsWith(q))
    ).reverse();
    const sort = query.get("sort") ?? "";
    if (sort === "created_asc") matching.reverse();
    if (sort === "name_asc") matching.sort((a, b) => a.name.localeCompare(b.name));
    if (sort === "last_used_desc") {
      matching.sort((a, b) => (b.lastUsedAt ?? "").localeCompare(a.lastUsedAt ?? ""));
    }
    const more = offset + limit < matching.length;
    return json(200, {
      keys: matching.slice(offset, offset + limit),
      nextCursor: more ? String(offset + limit) : null,
      capabilities: FAKE_CONFIG.capabilities,
      ...(fake.tenantCredits ? { tenantCredits: fake.tenantCredits } : {}),
    });
  };
  /** `GET /admin/usage?keys=`: hour % 5 accepted over the last 24 hours, sparse. */
  const usage = (query: URLSearchParams) => {
    const current = Date.now(); // the hour of this request, as the element reads it
    const hour = current - (current % 3_600_000);
    const ids = (query.get("keys") ?? "").split(",").filter(Boolean);
    if (ids.length > 100) return error(400, "invalid_query", "At most 100 keys.");
    return json(200, {
      granularity: "hour",
      from: query.get("from"),
      to: query.get("to"),
      keys: Object.fromEntries(ids.map((id) => [
        id,
        Array.from({ length: 24 }, (_, index) => ({
          start: new Date(hour - (23 - index) * 3_600_000).toISOString(),
          accepted: index % 5,
          refused: { api_key_scope_denied: 7 },
          cost: index % 5,
        })).filter((bucket) => bucket.accepted > 0),
      ])),
    });
  };
  const GRACE: Record<string, number> = {
    none: 0,
    "1h": 3_600_000,
    "24h": 86_400_000,
    "7d": 7 * 86_400_000,
  };
  const route = (
    method: string,
    path: string,
    query: URLSearchParams,
    body: Record<string, unknown>,
  ) => {
    if (fake.failAll === 401) return error(401, "unauthenticated", "API key is missing");
    if (fake.failAll === 403) return error(403, "forbidden", "Not allowed");
    if (fake.failAll === 500) return error(500, "internal_error", "Internal error");
    if (fake.failAll === 502) return error(502, "HTTP_502", "Bad gateway");
    if (method !== "GET" && fake.forbidden.includes(path)) {
      return error(403, "forbidden", "Not allowed");
    }
    if (method === "GET" && path === "/admin/config") return json(200, fake.config);
    if (method === "GET" && path === "/admin/keys") {
      return fake.failList
        ? error(503, "api_key_storage_unavailable", "The keys could not be loaded.")
        : list(query);
    }
    if (method === "GET" && path === "/admin/usage") return usage(query);
    if (method === "GET" && path === "/admin/audit") {
      if (fake.auditMissing) {
        return error(501, "not_implemented", "The audit route is not available");
      }
      return (fake.config.can as { audit?: boolean }).audit
        ? audit(query)
        : error(403, "forbidden", "Not allowed");
    }
    if (method === "POST" && path === "/admin/keys") {
      const expiresAt = typeof body.expiresAt === "string"
        ? new Date(body.expiresAt).toISOString()
        : body.expiresIn === "30d"
        ? new Date(now + 30 * 86_400_000).toISOString()
        : body.expiresIn === "90d"
        ? new Date(now + 90 * 86_400_000).toISOString()
        : null;
      const issued = issue(
        String(body.name),
        String(body.environment),
        body.scopes as string[],
        expiresAt,
      );
      record("key.created", issued.record);
      return json(201, { data: issued });
    }
    const match = /^\/admin\/keys\/(k\d+)(\/(rotate))?$/.exec(path);
    const key = fake.keys.find((k) => k.id === match?.[1]);
    if (!key || !match) return error(404, "api_key_record_not_found", "No such key.");
    const action = match[3];
    if (method === "GET" && action === undefined) return json(200, key);
    if (method === "DELETE" && action === undefined) {
      key.status = "revoked";
      record("key.revoked", key);
      return json(200, key);
    }
    if (method === "POST" && action === "rotate") {
      if (key.status !== "active") return error(409, "api_key_not_rotatable", "Not rotatable.");
      const at = Date.now() + fake.serverAheadMs;
      const graceExpiresAt = new Date(at + (GRACE[String(body.grace)] ?? 86_400_000))
        .toISOString();
      const issued = issue(key.name, key.environment, key.scopes, key.expiresAt);
      issued.record.replacesKeyId = key.id;
      issued.record.createdAt = new Date(at).toISOString();
      key.status = "rotating";
      key.expiresAt = graceExpiresAt;
      key.replacedByKeyId = issued.record.id;
      record("key.rotated", key);
      const answered = fake.rotateGraceExpiresAt === undefined
        ? graceExpiresAt
        : fake.rotateGraceExpiresAt;
      return json(201, {
        data: { ...issued, replacedKeyId: key.id, graceExpiresAt: answered },
      });
    }
    if (method === "PATCH" && action === undefined) {
      const expected = body.expectedName;
      if (typeof expected === "string" && expected !== key.name) {
        return error(409, "api_key_name_changed", "The key's name is no longer expectedName.");
      }
      key.name = String(body.name);
      record("key.renamed", key);
      return json(200, key);
    }
    return error(405, "METHOD_NOT_ALLOWED", "Not allowed.");
  };
  const server: Server = createServer(async (request, response) => {
    const url = new URL(request.url ?? "/", "http://x");
    let text = "";
    for await (const chunk of request) text += chunk;
    const body = text === "" ? {} : JSON.parse(text);
    const method = request.method ?? "GET";
    if (url.pathname === "/" || url.pathname === "/fr" || url.pathname === "/dark") {
      response.writeHead(200, { "Content-Type": "text/html; charset=utf-8" })
        .end(PAGE(url.pathname === "/fr" ? "fr" : "en", url.pathname === "/dark"));
      return;
    }
    if (url.pathname === "/elements.js") {
      response.writeHead(200, { "Content-Type": "text/javascript" }).end(bundle);
      return;
    }
    if (url.pathname === "/admin/keys" && fake.listDelayMs > 0) {
      await new Promise((done) => setTimeout(done, fake.listDelayMs));
    }
    fake.requests.push({
      method,
      path: url.pathname,
      query: url.searchParams,
      headers: request.headers,
      body,
    });
    if (fake.failAll === "network") {
      request.socket.destroy();
      return;
    }
    const limited = fake.rateLimit;
    if (
      limited && limited.times > 0 && limited.method === method && limited.path === url.pathname
    ) {
      limited.times--;
      const after = limited.retryAfter === null ? {} : { "Retry-After": limited.retryAfter };
      const [status, payload] = error(429, "rate_limited", "Too many requests.");
      response.writeHead(status, { "Content-Type": "application/json", ...after }).end(payload);
      return;
    }
    const [status, payload] = method !== "GET" &&
        request.headers[FAKE_CSRF.header.toLowerCase()] !== FAKE_CSRF.value
      ? error(403, "csrf_refused", "Missing the CSRF header.")
      : route(method, url.pathname, url.searchParams, body);
    const lost = fake.lost.indexOf(`${method} ${url.pathname}`);
    if (lost >= 0) {
      // Headers and part of the body, then nothing (a connection dropped before any answer is
      // sent again by the browser itself).
      fake.lost.splice(lost, 1);
      response.writeHead(status, {
        "Content-Type": "application/json",
        "Content-Length": String(new TextEncoder().encode(payload).length + 1),
      });
      response.write(payload.slice(0, 1), () => request.socket.destroy());
      return;
    }
    const gateway = fake.gateway.indexOf(`${method} ${url.pathname}`);
    if (gateway >= 0) {
      fake.gateway.splice(gateway, 1);
      response.writeHead(504, { "Content-Type": "text/html" })
        .end("<html><body><h1>504 Gateway Time-out</h1></body></html>");
      return;
    }
    const delay = fake.delays[`${method} ${url.pathname}`]?.shift() ?? 0;
    if (delay > 0) await new Promise((done) => setTimeout(done, delay));
    response.writeHead(status, { "Content-Type": "application/json" }).end(payload);
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      fake.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      resolve(fake);
    });
  });
}
