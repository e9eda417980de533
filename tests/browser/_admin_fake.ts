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
}

/** One recorded request. */
export interface Recorded {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: unknown;
}

/** The running fake. */
export interface AdminFake {
  origin: string;
  keys: FakeKey[];
  requests: Recorded[];
  /** Answer `GET /admin/keys` with a 503 envelope. */
  failList: boolean;
  /** Every secret handed out. */
  secrets: string[];
  close(): Promise<void>;
}

/** The CSRF header this fake demands: not the default, so the element must read it from config. */
export const FAKE_CSRF = { header: "X-Keys-Intent", value: "manage" };

const CONFIG = {
  scopes: [
    { scope: "orders:read", description: "List and read orders" },
    { scope: "orders:write" },
    { scope: "invoices:read" },
  ],
  environments: ["live", "test"],
  gracePresets: ["none", "1h", "24h", "7d"],
  expiryPresets: ["7d", "30d", "90d", "1y", "never"],
  capabilities: { rename: true, usage: true },
  csrf: FAKE_CSRF,
};

const PAGE = (lang: string) =>
  `<!doctype html>
<html lang="${lang}">
<meta charset="utf-8">
<title>API keys</title>
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
    secrets: [],
    close: () => new Promise((done) => server.close(() => done())),
  };
  const json = (status: number, body: unknown) => [status, JSON.stringify(body)] as const;
  const error = (status: number, code: string, message: string) =>
    json(status, { success: false, statusCode: status, error: { code, message } });
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
    };
    fake.keys.push(key);
    return { key: secret, record: key };
  };
  const route = (method: string, path: string, body: Record<string, unknown>) => {
    if (method === "GET" && path === "/admin/config") return json(200, CONFIG);
    if (method === "GET" && path === "/admin/keys") {
      return fake.failList
        ? error(503, "api_key_storage_unavailable", "The keys could not be loaded.")
        : json(200, {
          keys: fake.keys.filter((key) => key.status !== "revoked"),
          capabilities: CONFIG.capabilities,
        });
    }
    if (method === "POST" && path === "/admin/keys") {
      const expiresAt = body.expiresIn === "30d"
        ? new Date(now + 30 * 86_400_000).toISOString()
        : null;
      return json(201, {
        data: issue(
          String(body.name),
          String(body.environment),
          body.scopes as string[],
          expiresAt,
        ),
      });
    }
    const match = /^\/admin\/keys\/(k\d+)(\/(rotate|usage))?$/.exec(path);
    const key = fake.keys.find((k) => k.id === match?.[1]);
    if (!key || !match) return error(404, "NOT_FOUND", "No such key.");
    const action = match[3];
    if (method === "GET" && action === "usage") {
      // Sparse, as the usage storage answers: only hours with counts; hour % 5 accepted.
      const hour = now - (now % 3_600_000);
      return json(200, {
        keyId: key.id,
        granularity: "hour",
        buckets: Array.from({ length: 24 }, (_, index) => ({
          start: new Date(hour - (23 - index) * 3_600_000).toISOString(),
          accepted: index % 5,
          refused: { api_key_scope_denied: 7 },
          cost: index % 5,
        })).filter((bucket) => bucket.accepted > 0),
      });
    }
    if (method === "DELETE" && action === undefined) {
      key.status = "revoked";
      return json(200, key);
    }
    if (method === "POST" && action === "rotate") {
      key.status = "rotating";
      const issued = issue(key.name, key.environment, key.scopes, key.expiresAt);
      return json(201, { ...issued, replacedKeyId: key.id, graceExpiresAt: key.expiresAt });
    }
    if (method === "PATCH" && action === undefined) {
      key.name = String(body.name);
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
    if (url.pathname === "/" || url.pathname === "/fr") {
      response.writeHead(200, { "Content-Type": "text/html; charset=utf-8" })
        .end(PAGE(url.pathname === "/fr" ? "fr" : "en"));
      return;
    }
    if (url.pathname === "/elements.js") {
      response.writeHead(200, { "Content-Type": "text/javascript" }).end(bundle);
      return;
    }
    fake.requests.push({ method, path: url.pathname, headers: request.headers, body });
    const [status, payload] = method !== "GET" &&
        request.headers[FAKE_CSRF.header.toLowerCase()] !== FAKE_CSRF.value
      ? error(403, "csrf_refused", "Missing the CSRF header.")
      : route(method, url.pathname, body);
    response.writeHead(status, { "Content-Type": "application/json" }).end(payload);
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      fake.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      resolve(fake);
    });
  });
}
