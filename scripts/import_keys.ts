/**
 * Imports API-key records of another system from a JSON Lines file (one
 * `ImportApiKeyRecord` per line) as `ApiKeysService.importKeys` does, run
 * from a clone of the repository (scripts/ is not published):
 *
 *   deno task import-keys --jsonl keys.jsonl --pepper-version 1 \
 *     [--legacy-key-layout nestarc-v0]...
 *
 * With `DATABASE_URL`, into PostgreSQL through Prisma (the schema of
 * prisma/schema.prisma, migrations applied, client generated into
 * generated/prisma), writing each key's layout (the `layout` column of
 * migration 0006, so an app with `storesLayout: true` accepts the keys);
 * without it, into memory: a dry run that validates every line and reports
 * what an import would do. Nothing is hashed, so no pepper is needed:
 * `--pepper-version` (repeatable) names the versions the records may name;
 * without it, they are the versions of `API_KEY_PEPPERS` (the app's JSON, its
 * peppers of any length never used nor checked against the hashes). Prints
 * one JSON summary line; each conflict and error goes to stderr as it is met,
 * with its line number and, when well-formed, its prefix (never a hash), so
 * memory does not grow with them. Exit status: 0
 * when every line was imported, skipped or revoked, 1 when some were not, 2
 * for bad usage (a file it cannot read, a missing Prisma client, or a
 * database it cannot query, included). Lines longer than 1 MiB (of UTF-8)
 * or not valid UTF-8 are errors.
 *
 * @module
 */
import { parseArgs } from "node:util";
import {
  type ApiKeyStorage,
  type ImportApiKeyRecord,
  InMemoryApiKeyStorage,
  type LegacyKeyLayout,
  PrismaApiKeyStorage,
} from "../api_keys/mod.ts";
import { type KeyImporter, keyImporter } from "../api_keys/_import.ts";
import { notAVersion, pepperVersionOf } from "../api_keys/hasher.ts";

const MAX_LINE_BYTES = 1024 * 1024;

// Stdout carries only the summary line: the library's notices go to stderr.
console.info = console.error;

/** What a line that is not JSON becomes: validation reports it (`record must be an object`). */
const NOT_A_RECORD = null as unknown as ImportApiKeyRecord;

/** A non-blank line of the input: its number, and its record or why it cannot be read. */
type Line = { line: number; record: ImportApiKeyRecord } | { line: number; problem: string };

/**
 * The lines of a JSON Lines stream, each non-blank one with its number: its
 * record (a line that is not JSON yields a non-record), or its problem when
 * it is over `MAX_LINE_BYTES` bytes or not valid UTF-8 (never read with
 * U+FFFD, which would merge two tenant ids). Lines are split on their bytes
 * (a newline is never inside a UTF-8 sequence), so a line is counted while
 * read and no more than `MAX_LINE_BYTES` of it is held.
 */
async function* jsonLines(stream: AsyncIterable<Uint8Array>): AsyncGenerator<Line> {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let parts: Uint8Array[] = [];
  let bytes = 0;
  let line = 0;
  function add(part: Uint8Array) {
    bytes += part.length;
    if (bytes > MAX_LINE_BYTES) parts = [];
    else if (part.length > 0) parts.push(part);
  }
  function* take(): Generator<Line> {
    line++;
    const overlong = bytes > MAX_LINE_BYTES;
    const whole = new Uint8Array(overlong ? 0 : bytes);
    let at = 0;
    for (const part of parts) {
      whole.set(part, at);
      at += part.length;
    }
    [parts, bytes] = [[], 0];
    if (overlong) {
      yield { line, problem: "longer than 1 MiB (of UTF-8): not read" };
      return;
    }
    let text: string;
    try {
      text = decoder.decode(whole);
    } catch {
      yield { line, problem: "not valid UTF-8" };
      return;
    }
    if (text.trim() === "") return;
    let record = NOT_A_RECORD;
    try {
      record = JSON.parse(text);
    } catch {
      // Reported by validation.
    }
    yield { line, record };
  }
  for await (const chunk of stream) {
    let start = 0;
    let newline: number;
    while ((newline = chunk.indexOf(0x0a, start)) >= 0) {
      add(chunk.subarray(start, newline));
      yield* take();
      start = newline + 1;
    }
    add(chunk.slice(start));
  }
  if (bytes > 0) yield* take();
}

/** The command that generates the Prisma client the tool loads (the Prisma of deno.json). */
const GENERATE = "deno run -A npm:prisma@7.10.1 generate --schema prisma/schema.prisma";

/** Whether `api_keys` of the schema $1 has the column `layout` (migration 0006_api_key_layout). */
const HAS_LAYOUT_SQL = "SELECT 1 FROM information_schema.columns WHERE table_schema = $1 " +
  "AND table_name = 'api_keys' AND column_name = 'layout'";

/**
 * A Prisma storage over `DATABASE_URL` and the client generated into
 * generated/prisma, in the schema of the URL's `schema` parameter (Prisma's
 * convention, read by `prisma migrate deploy`; `public` without it). It writes
 * each key's layout (`storesLayout`), whatever the app's option: an app with
 * `storesLayout: true` accepts an imported legacy key only in its layout, and
 * one without never reads the column.
 */
async function prismaStorage(url: string) {
  // Never the URL in the message: it holds the password.
  if (!URL.canParse(url)) fatal("DATABASE_URL is not a connection URL");
  const schema = new URL(url).searchParams.get("schema") || "public";
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
    adapter: new PrismaPg({ connectionString: url }, { schema }),
  }) as ConstructorParameters<typeof PrismaApiKeyStorage>[0] & {
    $queryRawUnsafe(query: string, ...values: unknown[]): Promise<unknown[]>;
    $disconnect(): Promise<void>;
  };
  const close = () => client.$disconnect();
  let layoutColumn: unknown[];
  try {
    layoutColumn = await client.$queryRawUnsafe(HAS_LAYOUT_SQL, schema);
  } catch (error) {
    await close().catch(() => {});
    fatal(
      `cannot query the database of DATABASE_URL (${errorKind(error)}): nothing was imported`,
    );
  }
  if (layoutColumn.length === 0) {
    await close();
    fatal(
      `the table api_keys of schema ${schema} has no layout column: apply the repository's ` +
        "migrations (prisma/migrations, 0006_api_key_layout among them) first",
    );
  }
  const storage = new PrismaApiKeyStorage(client, { storesLayout: true });
  try {
    // The session check an app's `service.ready()` runs: a zone other than UTC (a role's or a
    // database's default) would store every instant moved by its offset.
    await storage.ready?.();
  } catch (error) {
    await close().catch(() => {});
    fatal(
      error instanceof TypeError
        ? `${error.message}; nothing was imported`
        : `cannot check the database session (${errorKind(error)}): nothing was imported`,
    );
  }
  return { storage, close };
}

/**
 * What failed, by name, code and driver-adapter kind (`PrismaClientKnownRequestError P2010
 * DatabaseNotReachable`), never by message: that may name the host, user or database.
 */
function errorKind(error: unknown): string {
  const { name, code, meta } = (error ?? {}) as {
    name?: unknown;
    code?: unknown;
    meta?: { driverAdapterError?: { cause?: { kind?: unknown } } };
  };
  const parts = [name, code, meta?.driverAdapterError?.cause?.kind];
  return parts.filter((part) => typeof part === "string" && /^\w+$/.test(part)).join(" ") ||
    "an unknown error";
}

/**
 * The flag of this tool for a record error the importer words with the service's options (a
 * layout only while none is given: a bad prefix of a given layout is the record's fault).
 */
function flagHint(message: string, layoutGiven: boolean): string | undefined {
  if (/^Invalid pepperVersion: pepper version/.test(message)) return "--pepper-version N";
  return !layoutGiven && /^Invalid prefix:|needs the service's legacyKeyLayouts/.test(message)
    ? "--legacy-key-layout NAME"
    : undefined;
}

/** Bad usage or environment: `message` on one line, exit status 2. */
function fatal(message: string): never {
  console.error(`import-keys: ${message}`);
  Deno.exit(2);
}

function usage(message: string): never {
  console.error(`import-keys: ${message}`);
  console.error(
    "usage: deno task import-keys --jsonl FILE --pepper-version N... " +
      "[--legacy-key-layout NAME]...",
  );
  Deno.exit(2);
}

/**
 * The pepper versions records may name: those of `--pepper-version` (no
 * pepper needed: the import never hashes), else those of `API_KEY_PEPPERS`,
 * whose peppers are only checked to be non-empty strings (the app's variable,
 * its old peppers at any length: never refused for being short).
 */
function pepperVersions(flags: string[] | undefined, json: string | undefined): number[] {
  if (flags !== undefined) {
    return flags.map((flag) =>
      pepperVersionOf(flag) ?? usage(
        `--pepper-version must be a positive integer (a version the records name), not ${
          JSON.stringify(flag)
        }`,
      )
    );
  }
  const expected = 'as JSON, each version to its pepper, e.g. {"1":"..."}';
  if (json === undefined) {
    usage(`give the pepper versions: --pepper-version N..., or API_KEY_PEPPERS ${expected}`);
  }
  let given: unknown;
  try {
    given = JSON.parse(json);
  } catch {
    usage(`API_KEY_PEPPERS must hold the peppers ${expected}`);
  }
  if (
    typeof given !== "object" || given === null || Array.isArray(given) ||
    Object.keys(given).length === 0
  ) {
    usage(`API_KEY_PEPPERS must hold at least one pepper ${expected}`);
  }
  return Object.entries(given).map(([key, pepper]) => {
    const version = pepperVersionOf(key) ?? usage(notAVersion("API_KEY_PEPPERS", key));
    if (typeof pepper !== "string" || pepper === "") {
      usage(
        `API_KEY_PEPPERS version ${version} must be a non-empty string ` +
          "(the other system's pepper of that version, as it is)",
      );
    }
    return version;
  });
}

/** Why the `--jsonl` file cannot be read, by the error's kind (never its message). */
function readProblem(error: unknown): string {
  if (error instanceof Deno.errors.NotFound) return "no such file";
  return error instanceof Deno.errors.IsADirectory ? "a directory" : errorKind(error);
}

/**
 * The bytes of the `--jsonl` file, opened now and read as iterated; bad usage
 * when it cannot be opened, is a directory, or a read fails. Any other file
 * is read (a pipe too: `--jsonl <(gunzip -c keys.jsonl.gz)`).
 */
async function openJsonl(path: string): Promise<AsyncIterable<Uint8Array>> {
  const cannotRead = (error: unknown): never =>
    fatal(`cannot read --jsonl ${path}: ${readProblem(error)}`);
  const file = await Deno.open(path).catch(cannotRead);
  // Opening a directory succeeds on Linux; its first read would fail.
  if ((await file.stat().catch(cannotRead)).isDirectory) {
    cannotRead(new Deno.errors.IsADirectory());
  }
  return (async function* () {
    try {
      yield* file.readable;
    } catch (error) {
      cannotRead(error);
    }
  })();
}

function parseOptions() {
  try {
    return parseArgs({
      args: Deno.args,
      options: {
        jsonl: { type: "string" },
        "legacy-key-layout": { type: "string", multiple: true },
        "pepper-version": { type: "string", multiple: true },
      },
    }).values;
  } catch (error) {
    return usage((error as Error).message);
  }
}

async function main(): Promise<number> {
  const values = parseOptions();
  if (values.jsonl === undefined) usage("--jsonl FILE is required");
  const versions = pepperVersions(values["pepper-version"], Deno.env.get("API_KEY_PEPPERS"));
  const jsonl = await openJsonl(values.jsonl);
  const url = Deno.env.get("DATABASE_URL");
  const target = url ? await prismaStorage(url) : {
    storage: new InMemoryApiKeyStorage() as ApiKeyStorage,
    close: () => Promise.resolve(),
  };
  try {
    let importer: KeyImporter;
    try {
      importer = keyImporter({
        storage: target.storage,
        pepperVersions: versions,
        legacyKeyLayouts: values["legacy-key-layout"] as LegacyKeyLayout[] | undefined,
      });
    } catch (error) {
      usage((error as Error).message);
    }
    // Each issue is reported before the next record is read: the line is the last one's.
    let current = 0;
    let unread = 0;
    const print = (line: number, kind: string, message: string, prefix: string | null = null) => {
      const flag = flagHint(message, values["legacy-key-layout"] !== undefined);
      console.error(
        `line ${line}${prefix === null ? "" : ` (${prefix})`}: ${kind}: ${message}` +
          (flag === undefined ? "" : `; with this tool: ${flag}`),
      );
    };
    const records = async function* () {
      for await (const read of jsonLines(jsonl)) {
        if ("problem" in read) {
          unread++;
          print(read.line, "error", read.problem);
        } else {
          current = read.line;
          yield read.record;
        }
      }
    };
    const result = await importer.importKeys(records(), {
      onIssue: ({ prefix, message }, kind) => print(current, kind, message, prefix),
    });
    const errors = result.errorCount + unread;
    console.log(JSON.stringify({
      dryRun: url === undefined || url === "",
      imported: result.imported,
      skipped: result.skipped,
      revoked: result.revoked,
      conflicts: result.conflictCount,
      errors,
    }));
    return result.conflictCount + errors === 0 ? 0 : 1;
  } finally {
    await target.close();
  }
}

Deno.exit(await main());
