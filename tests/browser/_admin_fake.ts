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
  /** Answer `GET /admin/keys` with a 500 envelope. */
  failList: boolean;
  /** Every secret handed out. */
  secrets: string[];
  close(): Promise<void>;
}

const CONFIG = {
  scopes: [{ resource: "orders", levels: ["read", "write"] }, {
    resource: "invoices",
    levels: ["read"],
  }],
  environments: ["live", "test"],
  gracePresets: [{ value: "0", label: "No grace" }, { value: "24h", label: "24 hours" }],
  expiryPresets: [{ value: "30d", label: "30 days" }, { value: "never", label: "Never" }],
  capabilities: { rename: true, usage: true },
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
    json(status, { success: false, error: { code, message } });
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
    return { ...key, key: secret };
  };
  const route = (method: string, path: string, body: Record<string, unknown>) => {
    if (method === "GET" && path === "/admin/config") return json(200, { data: CONFIG });
    if (method === "GET" && path === "/admin/keys") {
      return fake.failList
        ? error(500, "INTERNAL_SERVER_ERROR", "The keys could not be loaded.")
        : json(200, { data: fake.keys });
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
    const match = /^\/admin\/keys\/(k\d+)(\/(rotate|revoke|usage))?$/.exec(path);
    const key = fake.keys.find((k) => k.id === match?.[1]);
    if (!key || !match) return error(404, "NOT_FOUND", "No such key.");
    const action = match[3];
    if (method === "GET" && action === "usage") {
      return json(200, {
        data: Array.from({ length: 24 }, (_, hour) => ({
          hour: new Date(now - (23 - hour) * 3_600_000).toISOString(),
          count: hour % 5,
        })),
      });
    }
    if (method === "POST" && action === "revoke") {
      key.status = "revoked";
      return json(200, { data: key });
    }
    if (method === "POST" && action === "rotate") {
      key.status = "rotating";
      return json(201, { data: issue(key.name, key.environment, key.scopes, key.expiresAt) });
    }
    if (method === "PATCH" && action === undefined) {
      key.name = String(body.name);
      return json(200, { data: key });
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
        request.headers["x-requested-with"] !== "api-keys-manager"
      ? error(403, "CSRF", "Missing X-Requested-With.")
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
