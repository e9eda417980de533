/**
 * Starts the demo: opens the storage, bundles the page, builds the Nest app
 * on Express or Fastify, mounts the OpenAPI routes, seeds the demo keys and
 * listens. Used by `demo/main.ts`, the smoke tour and the tests.
 *
 * @module
 */
import type { AddressInfo } from "node:net";
import type { INestApplication } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import { createDemoSigner, type DemoSigner } from "./leaks/test_signer.ts";
import type { LeakReportLimits } from "./leaks/report_limits.ts";
import { ApiKeysService } from "../api_keys/mod.ts";
import { DemoAppModule } from "./app.module.ts";
import type { DemoAdapter } from "./cli.ts";
import { demoHttpAdapter } from "./client_ip.ts";
import { setupOpenApi } from "./openapi.ts";
import { loadPageAssets, type PageAssets } from "./page_assets.ts";
import { pageAdminKey, type PageSession } from "./page_session.ts";
import { acceptLeakReportBodies } from "./partner_body.ts";
import type { DemoPeppers } from "./peppers.ts";
import { demoSafeResponseOptions } from "./safe_response_options.ts";
import { type DemoKeys, seedDemoKeys } from "./seed.ts";
import { type DemoStorage, openMemoryStorage } from "./storage.ts";

/** How to start the demo. */
export interface DemoServerOptions {
  /** Port; 0 picks a free one. */
  port: number;
  /** Interface, e.g. `127.0.0.1`. */
  host: string;
  /** `express` or `fastify`. */
  adapter: DemoAdapter;
  /** Peppers by version. */
  peppers: DemoPeppers;
  /** Error bodies as RFC 9457 problem details. */
  problemDetails?: boolean;
  /** Storage (default: a new in-memory storage); closed with the server. */
  storage?: DemoStorage;
  /** Create the demo keys (default true). */
  seed?: boolean;
  /** Page files (default: loaded and bundled now). */
  pageAssets?: PageAssets;
  /** Where key lifecycle lines go (expiry notices, rotations); none without. */
  log?: (line: string) => void;
  /** Limits of the public leak-report route (default `LEAK_REPORT_LIMITS`). */
  leakReportLimits?: LeakReportLimits;
}

/** A running demo. */
export interface DemoServer {
  /** `http://host:port`. */
  url: string;
  /** The port actually bound. */
  port: number;
  /** The Nest application. */
  app: INestApplication;
  /** The seeded keys, when seeding was on. */
  keys: DemoKeys | undefined;
  /** The local secret-scanning signer the partner route trusts. */
  signer: DemoSigner;
  /** Where the keys live. */
  storageKind: DemoStorage["kind"];
  /** Stops listening, closes the app and the storage. */
  close(): Promise<void>;
}

/** The port is taken (or not ours to take). */
export class PortInUseError extends Error {
  /** The port asked for. */
  readonly port: number;
  /** The interface asked for. */
  readonly host: string;

  /** Creates the error for `host:port`. */
  constructor(host: string, port: number) {
    super(
      `Port ${port} on ${host} is already in use. Stop the other server, or pick another ` +
        `port: npm start -- --port ${port + 1} or deno task demo --port ${port + 1} ` +
        `(or PORT=${port + 1}).`,
    );
    this.name = "PortInUseError";
    this.port = port;
    this.host = host;
  }
}

function isAddressInUse(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "EADDRINUSE" || (error as Error | null)?.name === "AddrInUse";
}

/** How long in-flight requests may take to finish once the server closes. */
export const CLOSE_GRACE_MS = 1000;

/** The Node HTTP server under either adapter (both have these since Node 18.2). */
interface ClosableHttpServer {
  closeIdleConnections?(): void;
  closeAllConnections?(): void;
}

/**
 * Closes `app`: stops accepting, drops idle keep-alive connections, and
 * after {@link CLOSE_GRACE_MS} the connections still open (an HTTP client
 * may hold a connection the server never sees as idle, which would delay
 * the close by minutes).
 */
async function closeApp(app: INestApplication): Promise<void> {
  const http = app.getHttpServer() as ClosableHttpServer;
  const closing = app.close();
  http.closeIdleConnections?.();
  const timer = setTimeout(() => http.closeAllConnections?.(), CLOSE_GRACE_MS);
  try {
    await closing;
  } finally {
    clearTimeout(timer);
  }
}

function urlHost(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}

/** Starts the demo and resolves once it listens. */
export async function startDemoServer(options: DemoServerOptions): Promise<DemoServer> {
  const storage = options.storage ?? openMemoryStorage();
  let app: INestApplication | undefined;
  try {
    const pageAssets = options.pageAssets ?? await loadPageAssets();
    const safeResponse = demoSafeResponseOptions(options.problemDetails ?? false);
    const signer = await createDemoSigner();
    const pageSession: PageSession = { adminKey: undefined };
    const module = DemoAppModule.forRoot({
      storage: storage.storage,
      peppers: options.peppers,
      safeResponse,
      pageAssets,
      pageSession,
      secretScanningKeys: signer.publicKeys,
      log: options.log,
      leakReportLimits: options.leakReportLimits,
    });
    app = await NestFactory.create(module, await demoHttpAdapter(options.adapter), {
      logger: ["error", "warn"],
      abortOnError: false,
      rawBody: true, // the leaked-key routes read the exact bytes
    });
    setupOpenApi(app, safeResponse);
    acceptLeakReportBodies(app, options.adapter);
    // Seeded before init: the first expiry-notice run, at bootstrap, sees the seeded keys.
    const keys = options.seed === false ? undefined : await seedDemoKeys(app.get(ApiKeysService));
    pageSession.adminKey = pageAdminKey(options.host, keys);
    await app.init();
    try {
      await app.listen(options.port, options.host);
    } catch (error) {
      if (isAddressInUse(error)) throw new PortInUseError(options.host, options.port);
      throw error;
    }
    const { port } = app.getHttpServer().address() as AddressInfo;
    pageSession.port = port;
    const running = app;
    return {
      url: `http://${urlHost(options.host)}:${port}`,
      port,
      app: running,
      keys,
      signer,
      storageKind: storage.kind,
      close: async () => {
        await closeApp(running);
        await storage.close();
      },
    };
  } catch (error) {
    await app?.close().catch(() => {});
    await storage.close().catch(() => {});
    throw error;
  }
}
