/**
 * Benchmark servers in child processes (same runtime as the calling script)
 * and the Node load generator (`bench/http/loadgen.mjs`, autocannon).
 * Loopback only.
 *
 * @module
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface, type Interface } from "node:readline";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import process from "node:process";
import { ON_DENO } from "./harness.ts";

/**
 * The `bench/` source directory. On Deno, from this file's URL; on Node the
 * scripts run bundled from `node_modules/.saferoute-bench-XXXXXX/`, whose entry
 * script records the source directory in `SAFEROUTE_BENCH_DIR`.
 */
export const BENCH_DIR: string = ON_DENO
  ? fileURLToPath(new URL("../", import.meta.url))
  : process.env.SAFEROUTE_BENCH_DIR ?? resolve(dirname(process.argv[1]), "../../bench");

/** Command and arguments that run the benchmark server on this runtime. */
function serverCommand(args: string[]): [string, string[]] {
  if (ON_DENO) {
    const deno = (globalThis as unknown as { Deno: { execPath(): string } }).Deno.execPath();
    return [deno, [
      "run",
      "-A",
      "--v8-flags=--expose-gc",
      join(BENCH_DIR, "http/server.ts"),
      ...args,
    ]];
  }
  return [process.execPath, ["--expose-gc", join(dirname(process.argv[1]), "server.mjs"), ...args]];
}

/** A started benchmark server. */
export interface BenchServer {
  /** Base URL (`http://127.0.0.1:port`). */
  url: string;
  /** CPU time (µs) and memory of the server process now. */
  stats(): Promise<ServerStats>;
  /** The same after a full GC (when the runtime exposes `gc`). */
  memory(): Promise<ServerStats>;
  /** Stops the server. */
  close(): Promise<void>;
}

/** What a server reports on `stats`. */
export interface ServerStats {
  /** User + system CPU time, µs, since start. */
  cpuUs: number;
  /** Resident set size, bytes. */
  rss: number;
  /** V8 heap used, bytes. */
  heapUsed: number;
  /** V8 heap total, bytes. */
  heapTotal: number;
}

/** Starts `server.ts <platform> <variant> ...extra` and waits until it listens. */
export function startServer(platform: string, variant: string, extra: string[] = []) {
  const [command, args] = serverCommand([platform, variant, ...extra]);
  const child: ChildProcess = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (chunk) => (stderr += chunk));
  const lines: Interface = createInterface({ input: child.stdout! });
  const waiting: ((line: string) => void)[] = [];
  lines.on("line", (line) => waiting.shift()?.(line));
  const nextLine = () =>
    new Promise<string>((resolveLine, reject) => {
      const onExit = (code: number | null) =>
        reject(new Error(`server ${platform}/${variant} exited (${code}): ${stderr.slice(-2000)}`));
      child.once("exit", onExit);
      waiting.push((line) => {
        child.off("exit", onExit);
        resolveLine(line);
      });
    });
  return nextLine().then((line): BenchServer => {
    const { port } = JSON.parse(line) as { port: number };
    return {
      url: `http://127.0.0.1:${port}`,
      async stats() {
        const reply = nextLine();
        child.stdin!.write("stats\n");
        return JSON.parse(await reply) as ServerStats;
      },
      async memory() {
        const reply = nextLine();
        child.stdin!.write("memory\n");
        return JSON.parse(await reply) as ServerStats;
      },
      close() {
        return new Promise((done) => {
          const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
          child.once("exit", () => {
            clearTimeout(timer);
            done();
          });
          child.stdin!.write("exit\n");
        });
      },
    };
  });
}

/** Options of {@link load}. */
export interface LoadOptions {
  /** Full URL. */
  url: string;
  /** Seconds of load (or use `amount`). */
  duration?: number;
  /** Number of requests (instead of `duration`). */
  amount?: number;
  /** Concurrent connections (default 16). */
  connections?: number;
  /** Fixed request headers. */
  headers?: Record<string, string>;
  /** File of API keys, one per line: each request sends the next as `X-API-Key`. */
  keysFile?: string;
}

/** What one load run reports. */
export interface LoadResult {
  /** 2xx responses. */
  ok: number;
  /** Non-2xx responses, errors and timeouts. */
  bad: number;
  /** Mean requests per second. */
  rps: number;
  /** Mean latency, ms. */
  mean: number;
  /** Median latency, ms (autocannon's resolution: 1 ms). */
  p50: number;
  /** 99th percentile latency, ms. */
  p99: number;
  /** Length of the run, s. */
  seconds: number;
}

/** Runs the load generator on Node (`node bench/http/loadgen.mjs`). */
export function load(options: LoadOptions): Promise<LoadResult> {
  const node = ON_DENO ? "node" : process.execPath;
  const child = spawn(node, [join(BENCH_DIR, "http/loadgen.mjs"), JSON.stringify(options)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout!.on("data", (chunk) => (out += chunk));
  return new Promise((done, reject) => {
    child.on("error", reject);
    child.on("exit", (code) => {
      if (code !== 0) reject(new Error(`load generator exited with ${code}`));
      else done(JSON.parse(out.trim().split("\n").at(-1)!) as LoadResult);
    });
  });
}

/** Load `server` for `seconds` and measure its CPU µs per 2xx response. */
export async function measure(
  server: BenchServer,
  options: Omit<LoadOptions, "url">,
  path: string,
) {
  const before = await server.stats();
  const result = await load({ ...options, url: server.url + path });
  const after = await server.stats();
  return { ...result, cpuUsPerRequest: (after.cpuUs - before.cpuUs) / Math.max(1, result.ok) };
}
