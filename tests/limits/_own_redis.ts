/**
 * A redis-server of the test's own (Debian's `redis-server`, no persistence)
 * on a free loopback port, which the test may pause (SIGSTOP), resume, kill and
 * restart without touching the suite's shared `REDIS_URL`.
 */

/** One own redis-server. */
export interface OwnRedis {
  url: string;
  /** Freezes the server (SIGSTOP): connections stay open, nothing answers. */
  pause(): void;
  /** Resumes a paused server (SIGCONT). */
  resume(): void;
  /** Kills the server (SIGKILL) and waits for it to exit. */
  kill(): Promise<void>;
  /** Starts it again on the same port. */
  restart(): Promise<void>;
  /** Stops it for good. */
  stop(): Promise<void>;
}

/** A port nothing listens on now. */
function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/** Waits until the server on `port` accepts a connection (at most 5 s). */
async function waitUp(port: number): Promise<void> {
  const until = Date.now() + 5_000;
  while (Date.now() < until) {
    try {
      (await Deno.connect({ hostname: "127.0.0.1", port })).close();
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  throw new Error(`redis-server on ${port} did not start`);
}

/** Whether Debian's redis-server is installed. */
export function hasRedisServer(): boolean {
  try {
    new Deno.Command("redis-server", { args: ["--version"], stdout: "null" }).outputSync();
    return true;
  } catch {
    return false;
  }
}

/** Starts an own redis-server. */
export async function startOwnRedis(): Promise<OwnRedis> {
  const port = freePort();
  const spawn = () =>
    new Deno.Command("redis-server", {
      args: ["--bind", "127.0.0.1", "--port", String(port), "--save", "", "--appendonly", "no"],
      stdout: "null",
      stderr: "null",
    }).spawn();
  let child = spawn();
  await waitUp(port);
  const signal = (s: Deno.Signal) => {
    try {
      child.kill(s);
    } catch {
      // already gone
    }
  };
  const kill = async () => {
    signal("SIGCONT");
    signal("SIGKILL");
    await child.status;
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    pause: () => signal("SIGSTOP"),
    resume: () => signal("SIGCONT"),
    kill,
    async restart() {
      child = spawn();
      await waitUp(port);
    },
    stop: kill,
  };
}
