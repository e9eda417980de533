/**
 * Serves a Fetch handler on 127.0.0.1 with a free port: `Deno.serve` on
 * Deno, `@hono/node-server` on Node (the handler gets the server's
 * per-request info either way).
 *
 * @module
 */

/** A Fetch handler and the info its server passes. */
export type InfoHandler = (request: Request, info: unknown) => Response | Promise<Response>;

/** A running server. */
export interface Served {
  url: string;
  close(): Promise<void>;
}

/** The runtime: `Deno.serve` is used where there is one. */
export const RUNTIME: "deno" | "node" = "Deno" in globalThis ? "deno" : "node";

interface DenoServe {
  serve(
    options: { port: number; hostname: string; onListen(address: { port: number }): void },
    handler: InfoHandler,
  ): { shutdown(): Promise<void>; finished: Promise<void> };
}

/** Starts `handler` and resolves once it listens. */
export async function serve(handler: InfoHandler): Promise<Served> {
  if (RUNTIME === "deno") {
    const deno = (globalThis as unknown as { Deno: DenoServe }).Deno;
    let port = 0;
    const server = deno.serve(
      { port: 0, hostname: "127.0.0.1", onListen: (address) => (port = address.port) },
      handler,
    );
    return { url: `http://127.0.0.1:${port}`, close: () => server.shutdown() };
  }
  const { serve: nodeServe } = await import("@hono/node-server");
  return await new Promise<Served>((resolve) => {
    const server = nodeServe(
      { fetch: handler, port: 0, hostname: "127.0.0.1" },
      (address) => {
        resolve({
          url: `http://127.0.0.1:${address.port}`,
          close: () =>
            new Promise<void>((done) => {
              (server as unknown as { closeAllConnections?(): void }).closeAllConnections?.();
              server.close(() => done());
            }),
        });
      },
    );
  });
}
