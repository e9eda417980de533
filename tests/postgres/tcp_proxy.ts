/**
 * A loopback TCP proxy a test can cut and restore, to make PostgreSQL
 * unreachable for one client without touching the server other suites use.
 *
 * @module
 */

/** Forwards `127.0.0.1:<port>` to `host:targetPort` until stopped. */
export class TcpProxy {
  readonly #host: string;
  readonly #targetPort: number;
  #listener: Deno.Listener | undefined;
  readonly #conns = new Set<Deno.Conn>();

  constructor(host: string, targetPort: number) {
    this.#host = host;
    this.#targetPort = targetPort;
  }

  /** Listens on `port` (0: any free port) and returns the port. */
  start(port = 0): number {
    const listener = Deno.listen({ hostname: "127.0.0.1", port });
    this.#listener = listener;
    this.#accept(listener);
    return (listener.addr as Deno.NetAddr).port;
  }

  /** Stops listening and cuts every forwarded connection. */
  stop(): void {
    try {
      this.#listener?.close();
    } catch {
      // already closed
    }
    this.#listener = undefined;
    for (const conn of this.#conns) {
      try {
        conn.close();
      } catch {
        // already closed
      }
    }
    this.#conns.clear();
  }

  async #accept(listener: Deno.Listener): Promise<void> {
    try {
      for await (const inbound of listener) {
        this.#conns.add(inbound);
        try {
          const outbound = await Deno.connect({ hostname: this.#host, port: this.#targetPort });
          this.#conns.add(outbound);
          this.#pipe(inbound, outbound);
          this.#pipe(outbound, inbound);
        } catch {
          this.#close(inbound);
        }
      }
    } catch {
      // the listener was closed
    }
  }

  #pipe(from: Deno.Conn, to: Deno.Conn): void {
    from.readable.pipeTo(to.writable).catch(() => {}).finally(() => {
      this.#close(from);
      this.#close(to);
    });
  }

  #close(conn: Deno.Conn): void {
    if (!this.#conns.delete(conn)) return;
    try {
      conn.close();
    } catch {
      // already closed
    }
  }
}

/** A loopback port nothing listens on (it was free a moment ago). */
export function closedPort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}
