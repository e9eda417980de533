/**
 * Helpers of the demo tests: run `demo/main.ts` as a subprocess, start the
 * demo in process, and send requests with a key.
 *
 * @module
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { loadPageAssets, type PageAssets } from "../../demo/page_assets.ts";
import type { LeakReportLimits } from "../../demo/leaks/report_limits.ts";
import { type DemoServer, startDemoServer } from "../../demo/server.ts";
import { type FetchDemoServer, startFetchDemoServer } from "../../demo/fetch/server.ts";
import { chromiumMissing } from "../../demo/smoke/chromium.ts";
import { waitForOutput } from "../scripts/_fake_deno.ts";

/** Repository root (the subprocess's working directory). */
export const ROOT: string = fileURLToPath(new URL("../../", import.meta.url));

/** A finished subprocess. */
export interface RunResult {
  /** Exit code (null when killed by a signal). */
  code: number | null;
  /** Everything printed on stdout. */
  stdout: string;
  /** Everything printed on stderr. */
  stderr: string;
}

/** A running `demo/main.ts` subprocess. */
export interface DemoProcess {
  /** Sends a signal. */
  kill(signal: NodeJS.Signals): void;
  /** Resolves when stdout contains `text` (rejects after `timeoutMs`). */
  waitFor(text: string, timeoutMs?: number): Promise<string>;
  /** Resolves when the process exits. */
  exited: Promise<RunResult>;
}

/**
 * The environment of a demo process: this one's without `DATABASE_URL` and
 * `API_KEY_PEPPERS` (the demo tests run the embedded, in-memory demo even
 * where the developer's shell points at a database), plus `extra`.
 */
export function demoEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { DATABASE_URL: _url, API_KEY_PEPPERS: _peppers, ...inherited } = process.env;
  return { ...inherited, NO_COLOR: "1", ...extra };
}

/** Starts `deno run -A <script> ...args` (the Nest demo by default) with the given extra environment. */
export function spawnDemo(
  args: string[],
  env: Record<string, string> = {},
  script = "demo/main.ts",
): DemoProcess {
  const child = spawn(process.execPath, ["run", "-A", script, ...args], {
    cwd: ROOT,
    env: demoEnv(env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  const listeners = new Set<() => void>();
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
    for (const listener of listeners) listener();
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<RunResult>((resolve) => {
    child.on("close", (code) => {
      for (const listener of listeners) listener();
      resolve({ code, stdout, stderr });
    });
  });
  return {
    // process.kill, not child.kill: Deno's child_process would report the exit as by signal.
    kill: (signal) => process.kill(child.pid!, signal),
    exited,
    waitFor: (text, timeoutMs = 60_000) =>
      waitForOutput(
        {
          text: () => stdout,
          ended: () => child.exitCode !== null || child.signalCode !== null,
          listeners,
          shown: () => `${stdout}\n${stderr}`,
        },
        text,
        timeoutMs,
      ),
  };
}

/** Runs `demo/main.ts ...args` to completion. */
export function runDemo(args: string[], env: Record<string, string> = {}): Promise<RunResult> {
  return spawnDemo(args, env).exited;
}

let assets: Promise<PageAssets> | undefined;

/** A random pepper for an in-process demo. */
const testPeppers = () => ({ 1: crypto.randomUUID() + crypto.randomUUID() });

/** Starts the Fetch demo in process on a free port with a random pepper and the demo keys. */
export async function startTestFetchDemo(): Promise<FetchDemoServer> {
  assets ??= loadPageAssets();
  return startFetchDemoServer({
    port: 0,
    host: "127.0.0.1",
    peppers: testPeppers(),
    pageAssets: await assets,
  });
}

/** Starts the demo in process on a free port with a random pepper and the demo keys. */
export function startTestDemo(
  options: {
    adapter?: "express" | "fastify";
    port?: number;
    problemDetails?: boolean;
    leakReportLimits?: LeakReportLimits;
  } = {},
): Promise<DemoServer> {
  assets ??= loadPageAssets();
  return assets.then((pageAssets) =>
    startDemoServer({
      port: options.port ?? 0,
      host: "127.0.0.1",
      adapter: options.adapter ?? "express",
      peppers: testPeppers(),
      problemDetails: options.problemDetails,
      pageAssets,
      leakReportLimits: options.leakReportLimits,
    })
  );
}

/** A parsed answer. */
export interface Answer {
  /** Status. */
  status: number;
  /** Parsed JSON body. */
  // deno-lint-ignore no-explicit-any
  body: any;
  /** The body as sent. */
  text: string;
}

/** Sends `method path` with `key` and an optional JSON body. */
export async function call(
  server: { url: string },
  method: string,
  path: string,
  key?: string,
  body?: unknown,
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (key !== undefined) headers["X-API-Key"] = key;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(server.url + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text), text };
}

/** Codes both demos' smoke tours must show (one line each at least). */
export const TOUR_CODES: readonly string[] = [
  "api_key_missing",
  "api_key_malformed",
  "api_key_invalid",
  "api_key_revoked",
  "api_key_expired",
  "api_key_environment_mismatch",
  "api_key_scope_insufficient",
  "api_key_ip_not_allowed",
  "api_key_escalation_refused",
  "api_key_record_not_found",
  "api_key_invalid_input",
  "TOO_MANY_REQUESTS",
  "api_key_rate_limited",
  "api_key_usage_exceeded",
  "PROJECT_NOT_FOUND",
  "PROJECT_ALREADY_ARCHIVED",
  "PROJECT_ARCHIVED",
];

/**
 * Asserts a smoke tour's credit steps (`demo/smoke/credit_steps.ts`): the
 * trial key listed with 20 credits, 20 calls accepted, the 21st refused, 0 left.
 */
export function assertCreditSteps(stdout: string): void {
  for (
    const line of [
      /^ok +200 - +the admin list shows the trial key's credits: 20 \(GET \/admin\/keys\)$/m,
      /^ok +200 - +the trial key: 20 calls accepted, one credit each \(GET \/api\/projects/m,
      /^ok +429 api_key_usage_exceeded +credits spent: 429 without Retry-After \(no refill\), the policy's count unchanged /m,
      /^ok +200 - +the admin list shows the trial key's credits: 0 \(GET \/admin\/keys\)$/m,
    ]
  ) assert.match(stdout, line);
  assert.ok(
    stdout.indexOf("credits: 20 (GET") < stdout.indexOf("credits: 0 (GET"),
    "the balance is listed before and after the calls",
  );
}

/**
 * Asserts a smoke tour's page steps (`demo/smoke/page_steps.ts`): every one
 * passed where Chromium is installed or under CI=true (.ci/run installs it
 * first), else the one skip line.
 */
export function assertPageSteps(stdout: string): void {
  if (process.env.CI !== "true" && chromiumMissing()) {
    assert.match(stdout, /^skip page steps: /m);
    return;
  }
  for (
    const title of [
      "the page's <api-keys-manager> lists the demo tenant's keys",
      "create a key through the element: its secret once",
      "use it in the page's request console",
      "listed as used: last used, and its last 24 hours as bars",
      "revoke it through the element, typing its name",
    ]
  ) assert.match(stdout, new RegExp(`^ok +--- - +${title} \\(CHROMIUM /\\)$`, "m"), title);
  assert.match(stdout, /^ok +401 api_key_revoked +the key revoked through the element /m);
}
