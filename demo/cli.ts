/**
 * Command line of the demo server: flags, environment fallbacks and their
 * defaults, parsed without side effects so tests can call it.
 *
 * @module
 */
import { parseArgs } from "node:util";

/** HTTP platform the Nest app runs on. */
export type DemoAdapter = "express" | "fastify";

/** What `demo/main.ts` was asked to do. */
export interface DemoCliOptions {
  /** TCP port (0 picks a free one); `--port`, else `PORT`, else 3000. */
  port: number;
  /** Interface to listen on; `--host`, default `127.0.0.1`. */
  host: string;
  /** Run the scripted tour (on `port`; 0 unless named) and exit. */
  smoke: boolean;
  /** HTTP platform; `--adapter`, default `express`. */
  adapter: DemoAdapter;
  /** Errors as RFC 9457 problem details instead of the error envelope. */
  problemDetails: boolean;
  /** Seed the demo keys even when `DATABASE_URL` is set. */
  seed: boolean;
  /** Print usage and exit. */
  help: boolean;
}

/** Default port of the demo server. */
export const DEFAULT_PORT = 3000;

/** Default interface of the demo server. */
export const DEFAULT_HOST = "127.0.0.1";

/** Usage text printed by `--help` and after a bad flag. */
export const USAGE = `Usage: npm start -- [options]
   or: deno task demo [options]

Options:
  --port N             port to listen on (default: PORT or ${DEFAULT_PORT}; 0 = any free port)
  --host H             interface to listen on (default: ${DEFAULT_HOST})
  --adapter A          express | fastify (default: express)
  --problem-details    errors as RFC 9457 problem details instead of the error envelope
  --seed               with DATABASE_URL, also create the demo keys
  --smoke              run the scripted tour (on --port or PORT, else a free port), then exit
  --help               show this text

Environment:
  PORT                 port when --port is absent
  DATABASE_URL         PostgreSQL through PrismaApiKeyStorage (default: in-memory storage)
  API_KEY_PEPPERS      JSON map of pepper version to secret, e.g. {"1":"<32+ bytes>"}
                       (required with DATABASE_URL; default: a random pepper per run)`;

/** A flag or environment value the demo cannot use. */
export class DemoCliError extends Error {
  /** Creates the error with a message meant for the terminal. */
  constructor(message: string) {
    super(message);
    this.name = "DemoCliError";
  }
}

function parsePort(text: string, origin: string): number {
  const port = /^\d{1,5}$/.test(text) ? Number(text) : NaN;
  if (!(port >= 0 && port <= 65535)) {
    throw new DemoCliError(`${origin} must be a port number from 0 to 65535, got "${text}"`);
  }
  return port;
}

/**
 * Parses the demo's arguments; `env` supplies `PORT`. Throws `DemoCliError`
 * on an unknown flag or a bad value.
 *
 * @example
 * ```ts
 * import { parseDemoArgs } from "./cli.ts";
 * parseDemoArgs(["--port", "8080"], {}).port; // 8080
 * ```
 */
export function parseDemoArgs(
  args: string[],
  env: Record<string, string | undefined>,
): DemoCliOptions {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: {
        port: { type: "string" },
        host: { type: "string" },
        adapter: { type: "string" },
        "problem-details": { type: "boolean" },
        seed: { type: "boolean" },
        smoke: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (error) {
    throw new DemoCliError((error as Error).message);
  }
  const adapter = values.adapter ?? "express";
  if (adapter !== "express" && adapter !== "fastify") {
    throw new DemoCliError(`--adapter must be "express" or "fastify", got "${adapter}"`);
  }
  const host = values.host ?? DEFAULT_HOST;
  if (host.trim() === "") throw new DemoCliError("--host must not be empty");
  // The smoke tour picks a free port unless one is named.
  let port = values.smoke ? 0 : DEFAULT_PORT;
  if (values.port !== undefined) port = parsePort(values.port, "--port");
  else if (env.PORT !== undefined && env.PORT !== "") port = parsePort(env.PORT, "PORT");
  return {
    port,
    host,
    adapter,
    smoke: values.smoke ?? false,
    problemDetails: values["problem-details"] ?? false,
    seed: values.seed ?? false,
    help: values.help ?? false,
  };
}
