/**
 * Imports API-key records of another system from a JSON Lines file (one
 * `ImportApiKeyRecord` per line) with `ApiKeysService.importKeys`:
 *
 *   API_KEY_PEPPERS='{"1":"..."}' deno task import-keys --jsonl keys.jsonl \
 *     [--namespace acme] [--legacy-key-layout nestarc-v0]...
 *
 * With `DATABASE_URL`, into PostgreSQL through Prisma (the schema of
 * prisma/schema.prisma, migrations applied, client generated into
 * generated/prisma); without it, into memory: a dry run that validates every
 * line and reports what an import would do. Peppers are needed to check each
 * record's pepper version (nothing is hashed). Prints one JSON summary line;
 * each conflict and error goes to stderr with its line number (never a hash).
 * Exit status: 0 when every line was imported or skipped, 1 when some were
 * not, 2 for bad usage. Lines longer than 1 MiB are errors.
 *
 * @module
 */
import { parseArgs } from "node:util";
import {
  ApiKeysService,
  type ApiKeyStorage,
  type ImportApiKeyRecord,
  InMemoryApiKeyStorage,
  type LegacyKeyLayout,
  PrismaApiKeyStorage,
} from "../api_keys/mod.ts";

const MAX_LINE_BYTES = 1024 * 1024;

// Stdout carries only the summary line: the service's notices go to stderr.
console.info = console.error;

/** What a line that is not a record becomes: validation reports it (`record must be an object`). */
const NOT_A_RECORD = null as unknown as ImportApiKeyRecord;

/**
 * The records of a JSON Lines stream, one per non-blank line (a line that is
 * not JSON, or too long, yields a non-record), and the line number of each.
 */
async function* jsonLines(
  stream: ReadableStream<Uint8Array>,
  lineOf: number[],
): AsyncGenerator<ImportApiKeyRecord> {
  const decoder = new TextDecoder();
  let pending = "";
  let line = 0;
  let overlong = false;
  function* take(text: string): Generator<ImportApiKeyRecord> {
    line++;
    if (overlong) {
      overlong = false;
      lineOf.push(line);
      yield NOT_A_RECORD;
      return;
    }
    if (text.trim() === "") return;
    lineOf.push(line);
    try {
      yield JSON.parse(text);
    } catch {
      yield NOT_A_RECORD;
    }
  }
  for await (const chunk of stream) {
    pending += decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = pending.indexOf("\n")) >= 0) {
      yield* take(pending.slice(0, newline));
      pending = pending.slice(newline + 1);
    }
    if (pending.length > MAX_LINE_BYTES) {
      overlong = true;
      pending = "";
    }
  }
  pending += decoder.decode();
  if (pending !== "" || overlong) yield* take(pending);
}

/** A Prisma storage over `DATABASE_URL` and the client generated into generated/prisma. */
async function prismaStorage(url: string) {
  const clientFile = new URL("../generated/prisma/client.ts", import.meta.url);
  const [{ PrismaPg }, module] = await Promise.all([
    import("@prisma/adapter-pg"),
    // A computed specifier: `deno check` must not need the generated files.
    import(clientFile.href) as Promise<{ PrismaClient: new (options: unknown) => unknown }>,
  ]);
  const client = new module.PrismaClient({ adapter: new PrismaPg({ connectionString: url }) });
  return {
    storage: new PrismaApiKeyStorage(
      client as ConstructorParameters<typeof PrismaApiKeyStorage>[0],
    ),
    close: () => (client as { $disconnect(): Promise<void> }).$disconnect(),
  };
}

function usage(message: string): never {
  console.error(`import-keys: ${message}`);
  console.error(
    'usage: API_KEY_PEPPERS=\'{"1":"..."}\' deno task import-keys --jsonl FILE ' +
      "[--namespace NS] [--legacy-key-layout NAME]...",
  );
  Deno.exit(2);
}

function parseOptions() {
  try {
    return parseArgs({
      args: Deno.args,
      options: {
        jsonl: { type: "string" },
        namespace: { type: "string" },
        "legacy-key-layout": { type: "string", multiple: true },
      },
    }).values;
  } catch (error) {
    return usage((error as Error).message);
  }
}

async function main(): Promise<number> {
  const values = parseOptions();
  if (values.jsonl === undefined) usage("--jsonl FILE is required");
  let peppers: Record<string, string>;
  try {
    peppers = JSON.parse(Deno.env.get("API_KEY_PEPPERS") ?? "");
  } catch {
    usage('API_KEY_PEPPERS must hold the peppers as JSON, e.g. {"1":"..."}');
  }
  const url = Deno.env.get("DATABASE_URL");
  const target = url ? await prismaStorage(url) : {
    storage: new InMemoryApiKeyStorage() as ApiKeyStorage,
    close: () => Promise.resolve(),
  };
  try {
    let service: ApiKeysService;
    try {
      service = new ApiKeysService({
        peppers,
        storage: target.storage,
        namespace: values.namespace,
        legacyKeyLayouts: values["legacy-key-layout"] as LegacyKeyLayout[] | undefined,
        cache: false,
      });
    } catch (error) {
      usage((error as Error).message);
    }
    const file = await Deno.open(values.jsonl!);
    const lineOf: number[] = [];
    const result = await service.importKeys(jsonLines(file.readable, lineOf));
    for (
      const [kind, issues] of [["conflict", result.conflicts], ["error", result.errors]] as const
    ) {
      for (const { index, prefix, message } of issues) {
        console.error(
          `line ${lineOf[index]}${prefix === null ? "" : ` (${prefix})`}: ${kind}: ${message}`,
        );
      }
    }
    console.log(JSON.stringify({
      dryRun: url === undefined || url === "",
      imported: result.imported,
      skipped: result.skipped,
      conflicts: result.conflicts.length,
      errors: result.errors.length,
    }));
    return result.conflicts.length + result.errors.length === 0 ? 0 : 1;
  } finally {
    await target.close();
  }
}

Deno.exit(await main());
