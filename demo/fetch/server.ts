/**
 * Starts the Fetch demo on `Deno.serve`: opens the storage, bundles the
 * page, builds the app, seeds the demo keys and listens. Used by
 * `demo/fetch/main.ts`, its smoke tour and the tests.
 *
 * @module
 */
import { createDemoSigner, type DemoSigner } from "../leaks/test_signer.ts";
import { loadPageAssets, type PageAssets } from "../page_assets.ts";
import { pageAdminKey, type PageSession } from "../page_session.ts";
import type { DemoPeppers } from "../peppers.ts";
import { type DemoKeys, seedDemoKeys } from "../seed.ts";
import { type DemoStorage, openMemoryStorage } from "../storage.ts";
import { createFetchDemoApp } from "./app.ts";

/** How to start the Fetch demo. */
export interface FetchDemoServerOptions {
  /** Port; 0 picks a free one. */
  port: number;
  /** Interface, e.g. `127.0.0.1`. */
  host: string;
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

/** A running Fetch demo. */
export interface FetchDemoServer {
  /** `http://host:port`. */
  url: string;
  /** The port actually bound. */
  port: number;
  /** The seeded keys, when seeding was on. */
  keys: DemoKeys | undefined;
  /** The local secret-scanning signer the partner route trusts. */
  signer: DemoSigner;
  /** Where the keys live. */
  storageKind: DemoStorage["kind"];
  /** Stops listening, flushes the usage counts and closes the storage. */
  close(): Promise<void>;
}

const urlHost = (host: string) => host.includes(":") ? `[${host}]` : host;

/** Starts the Fetch demo and resolves once it listens. */
export async function startFetchDemoServer(
  options: FetchDemoServerOptions,
): Promise<FetchDemoServer> {
  const storage = options.storage ?? openMemoryStorage();
  try {
    const pageAssets = options.pageAssets ?? await loadPageAssets();
    const signer = await createDemoSigner();
    const pageSession: PageSession = { adminKey: undefined };
    const app = createFetchDemoApp({
      storage: storage.storage,
      peppers: options.peppers,
      problemDetails: options.problemDetails ?? false,
      pageAssets,
      pageSession,
      secretScanningKeys: signer.publicKeys,
    });
    const keys = options.seed === false ? undefined : await seedDemoKeys(app.service);
    pageSession.adminKey = pageAdminKey(options.host, keys);
    const server = Deno.serve(
      { port: options.port, hostname: options.host, onListen: () => {} },
      app.handler,
    );
    const { port } = server.addr;
    pageSession.port = port;
    return {
      url: `http://${urlHost(options.host)}:${port}`,
      port,
      keys,
      signer,
      storageKind: storage.kind,
      close: async () => {
        await server.shutdown();
        await app.service.close();
        await storage.close();
      },
    };
  } catch (error) {
    await storage.close().catch(() => {});
    throw error;
  }
}
