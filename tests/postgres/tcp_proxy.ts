/**
 * A loopback TCP proxy a test can cut and restore, to make PostgreSQL
 * unreachable for one client without touching the server other suites use.
 * With `dropNotifications`, it removes every NotificationResponse message the
 * server sends: `LISTEN` succeeds and no notice arrives, as behind a pooler in
 * transaction mode. `stall()` blackholes it: no byte goes through either way
 * and every socket stays open, as when the network drops a peer's packets;
 * `silenceOpen()` does it to the connections open now only.
 *
 * @module
 */

/** Forwards `127.0.0.1:<port>` to `host:targetPort` until stopped. */
export class TcpProxy {
  readonly #host: string;
  readonly #targetPort: number;
  #listener: Deno.Listener | undefined;
  readonly #conns = new Set<Deno.Conn>();
  readonly #dropNotifications: boolean;
  /** Set while stalled: each pipe holds its chunk until `stop()` resolves it. */
  #stalled: { held: Promise<void>; release: () => void } | undefined;
  /** Connections whose bytes are dropped (`silenceOpen`). */
  readonly #silent = new WeakSet<Deno.Conn>();

  constructor(host: string, targetPort: number, options: { dropNotifications?: boolean } = {}) {
    this.#host = host;
    this.#targetPort = targetPort;
    this.#dropNotifications = options.dropNotifications ?? false;
  }

  /** Listens on `port` (0: any free port) and returns the port. */
  start(port = 0): number {
    const listener = Deno.listen({ hostname: "127.0.0.1", port });
    this.#listener = listener;
    this.#accept(listener);
    return (listener.addr as Deno.NetAddr).port;
  }

  /** Stops forwarding bytes both ways; sockets stay open until `stop()`. */
  stall(): void {
    if (this.#stalled) return;
    let release!: () => void;
    const held = new Promise<void>((resolve) => release = resolve);
    this.#stalled = { held, release };
  }

  /**
   * The connections open now go silent for good (their bytes dropped both ways, their sockets
   * open, as behind a failover that kept them); new ones are forwarded.
   */
  silenceOpen(): void {
    for (const conn of this.#conns) this.#silent.add(conn);
  }

  /** Stops listening and cuts every forwarded connection (ending a stall). */
  stop(): void {
    this.#stalled?.release();
    this.#stalled = undefined;
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
          this.#pipe(outbound, inbound, this.#dropNotifications);
        } catch {
          this.#close(inbound);
        }
      }
    } catch {
      // the listener was closed
    }
  }

  #pipe(from: Deno.Conn, to: Deno.Conn, dropNotifications = false): void {
    const gated = from.readable.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform: async (chunk, controller) => {
          // A stalled chunk is dropped: the connection is cut by then.
          if (this.#stalled) return await this.#stalled.held;
          if (this.#silent.has(from)) return;
          controller.enqueue(chunk);
        },
      }),
    );
    const readable = dropNotifications ? gated.pipeThrough(withoutNotifications()) : gated;
    readable.pipeTo(to.writable).catch(() => {}).finally(() => {
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

/**
 * The server-to-client stream without its NotificationResponse ('A')
 * messages. Every server message is a type byte and a 4-byte length that
 * counts itself (the client sends no SSLRequest here, so no untyped reply).
 */
function withoutNotifications(): TransformStream<Uint8Array, Uint8Array> {
  let pending = new Uint8Array(0);
  return new TransformStream({
    transform(chunk, controller) {
      const joined = new Uint8Array(pending.length + chunk.length);
      joined.set(pending);
      joined.set(chunk, pending.length);
      let at = 0;
      while (joined.length - at >= 5) {
        const end = at + 1 + new DataView(joined.buffer, at + 1, 4).getUint32(0);
        if (end > joined.length) break;
        if (joined[at] !== 0x41) controller.enqueue(joined.slice(at, end));
        at = end;
      }
      pending = joined.slice(at);
    },
  });
}

/** A loopback port nothing listens on (it was free a moment ago). */
export function closedPort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}
