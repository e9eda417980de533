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
import { ExpressAdapter } from "@nestjs/platform-express";
import { FastifyAdapter } from "@nestjs/platform-fastify";
import { ApiKeysService } from "../api_keys/mod.ts";
import { DemoAppModule } from "./app.module.ts";
import type { DemoAdapter } from "./cli.ts";
import { setupOpenApi } from "./openapi.ts";
import { loadPageAssets, type PageAssets } from "./page_assets.ts";
import type { DemoPeppers } from "./peppers.ts";
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
        `port: deno task demo --port ${port + 1} (or PORT=${port + 1}).`,
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

function urlHost(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}

/** Starts the demo and resolves once it listens. */
export async function startDemoServer(options: DemoServerOptions): Promise<DemoServer> {
  const storage = options.storage ?? openMemoryStorage();
  let app: INestApplication | undefined;
  try {
    const pageAssets = options.pageAssets ?? await loadPageAssets();
    const module = DemoAppModule.forRoot({
      storage: storage.storage,
      peppers: options.peppers,
      problemDetails: options.problemDetails ?? false,
      pageAssets,
    });
    const adapter = options.adapter === "fastify" ? new FastifyAdapter() : new ExpressAdapter();
    app = await NestFactory.create(module, adapter, {
      logger: ["error", "warn"],
      abortOnError: false,
    });
    setupOpenApi(app);
    await app.init();
    const keys = options.seed === false ? undefined : await seedDemoKeys(app.get(ApiKeysService));
    try {
      await app.listen(options.port, options.host);
    } catch (error) {
      if (isAddressInUse(error)) throw new PortInUseError(options.host, options.port);
      throw error;
    }
    const { port } = app.getHttpServer().address() as AddressInfo;
    const running = app;
    return {
      url: `http://${urlHost(options.host)}:${port}`,
      port,
      app: running,
      keys,
      storageKind: storage.kind,
      close: async () => {
        await running.close();
        await storage.close();
      },
    };
  } catch (error) {
    await app?.close().catch(() => {});
    await storage.close().catch(() => {});
    throw error;
  }
}
