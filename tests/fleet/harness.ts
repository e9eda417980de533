/**
 * The fleet test's machinery: the Node copy of `instance.ts` on the npm build
 * (the limits suite's Node processes use it too),
 * starting and stopping instances, paced probes over loopback HTTP, and the
 * percentile report.
 *
 * @module
 */
import { cpSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import assert from "node:assert/strict";
import { compile, compilerOptions } from "../../scripts/npm_build/compile.ts";
import { ROOT } from "../../scripts/npm_build/config.ts";
import { npmBuild } from "../../scripts/npm_build/fresh.ts";

/** Interval between two verifies of one instance while a trial waits for it. */
export const PACE_MS = 5;

/** Deadline of each request to an instance: a hung instance fails the run, never stalls it. */
const REQUEST_TIMEOUT_MS = 15_000;

/**
 * A folder Node runs test files from: `entries` (repository-relative; default
 * the fleet's instance and the generated Prisma Client) and the files of their
 * folders they import, compiled to ESM, the npm build's `esm/` files (`npmBuild`) over the
 * paths of the sources they come from (so relative imports of the library load
 * the package), and the repository's `node_modules`. Returns its path.
 */
export async function prepareNodeTree(
  entries = ["tests/fleet/instance.ts", "generated/prisma/client.ts"],
): Promise<string> {
  const built = await npmBuild();
  const tree = await Deno.makeTempDir({ prefix: "api-kit-node-" });
  const folders = entries.map((entry) => entry.slice(0, entry.lastIndexOf("/") + 1));
  const { errors } = compile(
    entries.map((entry) => join(ROOT, entry)),
    compilerOptions("esm", tree, false),
    (rel) => folders.some((folder) => rel.startsWith(folder)),
  );
  if (errors.length > 0) {
    // `deno check` is the type gate; tsc sees Node's types instead of Deno's.
    console.log(`# node tree: tsc reported ${errors.length} type errors (emitted anyway)`);
  }
  cpSync(join(built, "esm"), tree, { recursive: true });
  Deno.writeTextFileSync(join(tree, "package.json"), '{ "type": "module" }\n');
  symlinkSync(join(ROOT, "node_modules"), join(tree, "node_modules"), "dir");
  return tree;
}

/** A running instance. */
export interface Instance {
  /** `node-1`, `node-2`, `deno`. */
  readonly name: string;
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string;
  readonly process: Deno.ChildProcess;
  /** The lines it printed after `READY`, growing while it runs. */
  readonly output: string[];
  /** Resolves once its stdout closed (every line in `output`). */
  readonly outputEnd: Promise<void>;
}

/**
 * Starts `command args` with `FLEET_NAME=name` and `env` and waits (30 s at
 * most) for `READY <port>`.
 */
export async function startInstance(
  name: string,
  command: string,
  args: string[],
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<Instance> {
  const child = new Deno.Command(command, {
    args,
    cwd: ROOT,
    env: { ...env, DATABASE_URL: databaseUrl, FLEET_NAME: name },
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  const timeout = setTimeout(() => child.kill("SIGKILL"), 30_000);
  try {
    while (true) {
      const { value, done } = await lines.read();
      if (done) throw new Error(`${name} exited before it was ready`);
      buffered += value;
      const match = /READY (\d+)\n/.exec(buffered);
      if (match !== null) {
        const output: string[] = [];
        let rest = buffered.slice(match.index + match[0].length);
        // Keep reading so the instance never blocks on a full pipe.
        const outputEnd = (async () => {
          for (let read = await lines.read(); !read.done; read = await lines.read()) {
            const parts = (rest + read.value).split("\n");
            rest = parts.pop()!;
            output.push(...parts);
          }
        })().catch(() => {});
        const origin = `http://127.0.0.1:${match[1]}`;
        return { name, origin, process: child, output, outputEnd };
      }
    }
  } finally {
    clearTimeout(timeout);
  }
}

/** Asks an instance to exit; kills it after 5 s. Resolves with its exit code. */
export async function stopInstance(instance: Instance): Promise<number> {
  await fetch(`${instance.origin}/admin/exit`, {
    method: "POST",
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  })
    .then((response) => response.body?.cancel())
    .catch(() => {});
  const timer = setTimeout(() => instance.process.kill("SIGKILL"), 5_000);
  try {
    return (await instance.process.status).code;
  } finally {
    clearTimeout(timer);
  }
}

/** Sends SIGTERM; kills the instance after 10 s. Resolves with its exit code once its output is read. */
export async function terminate(instance: Instance): Promise<number> {
  instance.process.kill("SIGTERM");
  const timer = setTimeout(() => instance.process.kill("SIGKILL"), 10_000);
  try {
    return (await instance.process.status).code;
  } finally {
    clearTimeout(timer);
    await instance.outputEnd;
  }
}

/** The JSON of each line `label …` the instance printed, in order. */
export function printed<T>(instance: Instance, label: string): T[] {
  return instance.output.filter((line) => line.startsWith(`${label} `))
    .map((line) => JSON.parse(line.slice(label.length + 1)) as T);
}

/** Sends `method` (with `body` as JSON) to an admin route and returns the JSON answer (a 2xx is required). */
export async function admin<T = Record<string, unknown>>(
  instance: Instance,
  path: string,
  method = "POST",
  body?: unknown,
  timeoutMs = REQUEST_TIMEOUT_MS,
): Promise<T> {
  const response = await fetch(`${instance.origin}/admin/${path}`, {
    method,
    ...(body === undefined
      ? {}
      : { body: JSON.stringify(body), headers: { "content-type": "application/json" } }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const answer = await response.json();
  assert.ok(response.ok, `${instance.name} ${path}: ${response.status} ${JSON.stringify(answer)}`);
  return answer as T;
}

/** Waits (10 s at most each) until every instance's feed is healthy. */
export async function feedsInSync(instances: Instance[]): Promise<void> {
  for (const instance of instances) {
    const deadline = performance.now() + 10_000;
    while (
      !(await admin<{ feed: { healthy: boolean } }>(instance, "stats", "GET")).feed.healthy
    ) {
      assert.ok(performance.now() < deadline, `${instance.name}: the feed never synced`);
      await sleep(50);
    }
  }
}

/** Status of `GET /orders` with `key` (the guarded route). */
export async function guarded(instance: Instance, key: string): Promise<number> {
  const response = await fetch(`${instance.origin}/orders`, {
    headers: { "x-api-key": key },
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  await response.body?.cancel();
  return response.status;
}

/** `GET /<path>` (default `orders`) with `key`: the status and, on a refusal, the error `code` of the body. */
export async function guardedCode(
  instance: Instance,
  key: string,
  path = "orders",
): Promise<{ status: number; code?: string }> {
  const response = await fetch(`${instance.origin}/${path}`, {
    headers: { "x-api-key": key },
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const body = await response.json() as { code?: string };
  return response.ok ? { status: response.status } : { status: response.status, code: body.code };
}

/** POSTs `body` with `headers` to `path`; returns the status and the body text. */
export async function post(
  instance: Instance,
  path: string,
  body: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  const response = await fetch(`${instance.origin}/${path}`, {
    method: "POST",
    headers,
    body,
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  return { status: response.status, body: await response.text() };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Verifies `key` on `instance` every `PACE_MS` until it answers `wanted`;
 * returns the milliseconds from `since` (a `performance.now()` time) to that
 * answer. Fails past `boundMs`, or on any status but `wanted` and `expected`
 * (the one before the change).
 */
export async function until(
  instance: Instance,
  key: string,
  wanted: number,
  expected: number,
  since: number,
  boundMs: number,
): Promise<number> {
  while (true) {
    const tick = performance.now();
    const status = await guarded(instance, key);
    const elapsed = performance.now() - since;
    if (status === wanted) return elapsed;
    assert.equal(status, expected, `${instance.name}: unexpected status ${status}`);
    if (elapsed > boundMs) {
      assert.fail(`${instance.name} still answered ${status} after ${elapsed.toFixed(0)} ms`);
    }
    await sleep(Math.max(0, PACE_MS - (performance.now() - tick)));
  }
}

/**
 * Verifies `key` on `instance` every `PACE_MS` until it is accepted (it must
 * be refused until then, for at most `boundMs`): the first use of a key that
 * was never used. Returns when that accepted request was sent and answered,
 * by `performance.now()` and by the wall clock.
 */
export async function firstAccepted(
  instance: Instance,
  key: string,
  boundMs: number,
): Promise<{ sentAt: number; sentWall: number; answeredWall: number }> {
  const start = performance.now();
  while (true) {
    const [sentAt, sentWall] = [performance.now(), Date.now()];
    const status = await guarded(instance, key);
    if (status === 200) return { sentAt, sentWall, answeredWall: Date.now() };
    assert.equal(status, 401, `${instance.name}: unexpected status ${status}`);
    assert.ok(performance.now() - start <= boundMs, `${instance.name} never accepted the key`);
    await sleep(PACE_MS);
  }
}

/**
 * `Promise.all` that waits for every promise before failing: a failed wait on
 * one instance leaves no other running past its test. Rejects with the first
 * rejection's reason, naming the others.
 */
export async function every<T>(promises: Promise<T>[]): Promise<T[]> {
  const results = await Promise.allSettled(promises);
  const failures = results.flatMap((r) => r.status === "rejected" ? [r.reason] : []);
  if (failures.length === 0) return results.map((r) => (r as PromiseFulfilledResult<T>).value);
  if (failures.length === 1) throw failures[0];
  throw new AggregateError(failures, failures.map(String).join("; "));
}

/** `p` (0 to 1) quantile of sorted `samples` (nearest rank). */
function quantile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];
}

/**
 * One report line: p50/p99/max of `samples` (ms), and the target `p99 ≤
 * targetMs`, `MISSED` when out of range (never a failure).
 */
export function reportLine(label: string, samples: number[], targetMs: number): string {
  const sorted = [...samples].sort((a, b) => a - b);
  const [p50, p99, max] = [quantile(sorted, 0.5), quantile(sorted, 0.99), sorted.at(-1)!];
  const verdict = p99 <= targetMs ? "met" : "MISSED";
  return `# fleet: ${label.padEnd(44)} n=${String(sorted.length).padStart(5)}  p50 ${
    p50.toFixed(1)
  } ms  p99 ${p99.toFixed(1)} ms  max ${
    max.toFixed(1)
  } ms  (target p99 <= ${targetMs} ms: ${verdict})`;
}
