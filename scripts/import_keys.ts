/**
 * Imports API-key records of another system from a JSON Lines file (one
 * `ImportApiKeyRecord` per line) with `ApiKeysService.importKeys`, run from a
 * clone of the repository (scripts/ is not published):
 *
 *   API_KEY_PEPPERS='{"1":"..."}' deno task import-keys --jsonl keys.jsonl \
 *     [--namespace acme] [--legacy-key-layout nestarc-v0]...
 *
 * With `DATABASE_URL`, into PostgreSQL through Prisma (the schema of
 * prisma/schema.prisma, migrations applied, client generated into
 * generated/prisma), writing each key's layout (the `layout` column of
 * migration 0006, so an app with `storesLayout: true` accepts the keys);
 * without it, into memory: a dry run that validates every line and reports
 * what an import would do. Nothing is hashed: `API_KEY_PEPPERS` gives the
 * pepper versions the records may name (the peppers, of any length, are not
 * checked against the hashes). Prints one JSON summary line; each conflict
 * and error goes to stderr with its line number and, when well-formed, its
 * prefix (never a hash). Exit status: 0 when every line was imported, skipped
 * or revoked, 1 when some were not, 2 for bad usage (a missing file or Prisma
 * client included). Lines longer than 1 MiB are errors.
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

/** The command that generates the Prisma client the tool loads (the Prisma of deno.json). */
const GENERATE = "deno run -A npm:prisma@7.10.1 generate --schema prisma/schema.prisma";

/** Whether the table `api_keys` has the column `layout` (migration `0006_api_key_layout`). */
const HAS_LAYOUT_SQL = "SELECT 1 FROM information_schema.columns WHERE table_schema = " +
  "current_schema() AND table_name = 'api_keys' AND column_name = 'layout'";

/**
 * A Prisma storage over `DATABASE_URL` and the client generated into
 * generated/prisma. It writes each key's layout (`storesLayout`), whatever the
 * app's option: an app with `storesLayout: true` accepts an imported legacy
 * key only in its layout, and one without never reads the column.
 */
async function prismaStorage(url: string) {
  const clientFile = new URL("../generated/prisma/client.ts", import.meta.url);
  try {
    await Deno.stat(clientFile);
  } catch {
    fatal(
      "the Prisma client is not generated (generated/prisma/client.ts): " +
        `run \`${GENERATE}\` in the repository first`,
    );
  }
  const [{ PrismaPg }, module] = await Promise.all([
    import("@prisma/adapter-pg"),
    // A computed specifier: `deno check` must not need the generated files.
    import(clientFile.href) as Promise<{ PrismaClient: new (options: unknown) => unknown }>,
  ]);
  const client = new module.PrismaClient({
    adapter: new PrismaPg({ connectionString: url }),
  }) as ConstructorParameters<typeof PrismaApiKeyStorage>[0] & {
    $queryRawUnsafe(query: string): Promise<unknown[]>;
    $disconnect(): Promise<void>;
  };
  const close = () => client.$disconnect();
  if ((await client.$queryRawUnsafe(HAS_LAYOUT_SQL)).length === 0) {
    await close();
    fatal(
      "the table api_keys has no layout column: apply the repository's migrations " +
        "(prisma/migrations, 0006_api_key_layout among them) first",
    );
  }
  return { storage: new PrismaApiKeyStorage(client, { storesLayout: true }), close };
}

/** Bad usage: `message` on one line, exit status 2. */
function fatal(message: string): never {
  console.error(`import-keys: ${message}`);
  Deno.exit(2);
}

function usage(message: string): never {
  console.error(`import-keys: ${message}`);
  console.error(
    'usage: API_KEY_PEPPERS=\'{"1":"..."}\' deno task import-keys --jsonl FILE ' +
      "[--namespace NS] [--legacy-key-layout NAME]...",
  );
  Deno.exit(2);
}

/**
 * Any pepper of at least 32 bytes: the service is given one per version of
 * `API_KEY_PEPPERS` in place of the peppers given, which the import never uses.
 */
const STAND_IN_PEPPER = "import-keys-never-hashes-0123456789abcdef";

/**
 * The pepper versions of `API_KEY_PEPPERS`, each with `STAND_IN_PEPPER`. The
 * import never hashes (a record's hash is stored as given): it only checks
 * that each record's pepper version is configured. So the old peppers are
 * taken at any length, never refused for being short (replacing one would
 * import keys that never verify), and not checked against the hashes.
 */
function pepperVersions(json: string | undefined): Record<string, string> {
  const expected = 'as JSON, each version to its pepper, e.g. {"1":"..."}';
  let given: unknown;
  try {
    given = JSON.parse(json ?? "");
  } catch {
    usage(`API_KEY_PEPPERS must hold the peppers ${expected}`);
  }
  if (
    typeof given !== "object" || given === null || Array.isArray(given) ||
    Object.keys(given).length === 0
  ) {
    usage(`API_KEY_PEPPERS must hold at least one pepper ${expected}`);
  }
  const versions: Record<string, string> = {};
  for (const [version, pepper] of Object.entries(given)) {
    if (typeof pepper !== "string" || pepper === "") {
      usage(
        `API_KEY_PEPPERS version ${JSON.stringify(version)} must be a non-empty string ` +
          "(the other system's pepper of that version, as it is)",
      );
    }
    versions[version] = STAND_IN_PEPPER;
  }
  return versions;
}

/** The `--jsonl` file, open; bad usage when it cannot be read. */
async function openJsonl(path: string): Promise<Deno.FsFile> {
  try {
    return await Deno.open(path);
  } catch (error) {
    fatal(
      `cannot read --jsonl ${path}: ${
        error instanceof Deno.errors.NotFound ? "no such file" : (error as Error).name
      }`,
    );
  }
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
  const peppers = pepperVersions(Deno.env.get("API_KEY_PEPPERS"));
  const file = await openJsonl(values.jsonl);
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
      revoked: result.revoked,
      conflicts: result.conflicts.length,
      errors: result.errors.length,
    }));
    return result.conflicts.length + result.errors.length === 0 ? 0 : 1;
  } finally {
    await target.close();
  }
}

Deno.exit(await main());
