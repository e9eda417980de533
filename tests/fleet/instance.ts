/**
 * One instance of the fleet test: a Nest app with `ApiKeysModule` over
 * `PrismaApiKeyStorage` (the generated Prisma Client over `@prisma/adapter-pg`)
 * following `createPostgresFeed`, on 127.0.0.1. Runs on Deno from the sources
 * and on Node from the npm build (`fleet_test.ts` compiles this file and
 * overlays `npm/esm/` on the sources it imports).
 *
 * Routes: `GET /orders` behind `ApiKeysGuard` (scope `orders:read`;
 * `GET /orders/export`: `orders:write`); the
 * leaked-key endpoints through the Nest binding (`rawBody: true`):
 * `POST /github/secret-scanning` (the partner handler, trusting the one
 * signing key of `FLEET_SIGNER_ID` / `FLEET_SIGNER_PEM`) and
 * `POST /report-leak` (the public revocation handler); and the test's
 * controls under `/admin` (unguarded, loopback only): `POST create`,
 * `POST revoke/:id`, `POST rotate/:id` (query `gracePeriodMs`, default 0;
 * `graceStarts` and `maxWaitMs` passed on when given), `GET events/:id` (the
 * events of that key this instance emitted, oldest first), `GET stats`,
 * `POST probe/:kind/:count` (in-process verifies with a query count),
 * `POST exit`, and `POST import-legacy` (imports a new `nestarc-v0` key,
 * which every instance accepts: `legacyKeyLayouts`). Prints `READY <port>` once listening. Every query the Prisma
 * Client sends is counted (Prisma query events); the feed's own connection is
 * not Prisma's.
 *
 * With `FLEET_USAGE_FLUSH_MS` (`usage_test.ts`): the service records usage
 * (`usage.flushIntervalMs`), `POST /admin/usage/drive` verifies in process, and the instance prints a
 * line per usage statement (`USAGE_FLUSHING`, `USAGE_FLUSHED`), `USAGE_KILLED`
 * before it kills itself (`killAfterMs` of the drive, or `POST /admin/usage/kill`),
 * and `USAGE_REPORT` once `service.close()` ran. Its storage has `usageBatches`
 * (migration 0013): a flush retried after its deadline counts once.
 *
 * Environment: `DATABASE_URL`, `FLEET_NAME`, `FLEET_SIGNER_ID`,
 * `FLEET_SIGNER_PEM`, `FLEET_USAGE_FLUSH_MS`.
 *
 * @module
 */
import "reflect-metadata";
import process from "node:process";
import { createHash, randomInt } from "node:crypto";
import { setImmediate } from "node:timers";
import {
  Body,
  Controller,
  Get,
  HttpCode,
  Inject,
  Module,
  Param,
  Post,
  Query,
  Req,
  Res,
  UseGuards,
} from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import { PrismaPg } from "@prisma/adapter-pg";
import {
  type ApiKeyEvent,
  ApiKeysService,
  createPublicRevocationHandler,
  createSecretScanningPartnerHandler,
  generateKey,
  type LeakReportHandler,
  type PrismaApiKeyClient,
  PrismaApiKeyStorage,
  type PrismaRotationWaitDelegate,
  type PrismaUsageClient,
  type PublicRevocationHandler,
  type RequiredScope,
  type RotateApiKeyInput,
  type SecretScanningPublicKey,
} from "../../api_keys/mod.ts";
import { ApiKeysGuard, ApiKeysModule, RequireScope } from "../../api_keys/nest/mod.ts";
import {
  leakReportFromRequest,
  type LeakReportHttpRequest,
  type LeakReportHttpResponse,
  sendLeakReport,
} from "../../api_keys/nest/api_keys.leaks.ts";
import { createPostgresFeed } from "../../api_keys/postgres/mod.ts";
import { FLEET_PEPPER } from "./fleet_pepper.ts";

const SCOPES: RequiredScope[] = [{ resource: "orders", level: "read" }];

const url = process.env.DATABASE_URL;
const name = process.env.FLEET_NAME ?? "instance";
if (!url) throw new Error("DATABASE_URL is not set");

function required(variable: string): string {
  const value = process.env[variable];
  if (!value) throw new Error(`${variable} is not set`);
  return value;
}
/** The test's stand-in for GitHub's signing key. */
const signerKey: SecretScanningPublicKey = {
  key_identifier: required("FLEET_SIGNER_ID"),
  key: required("FLEET_SIGNER_PEM"),
};

/** The Prisma Client surface used here. */
interface FleetPrismaClient extends PrismaApiKeyClient, PrismaUsageClient {
  apiKeyRotationWait: PrismaRotationWaitDelegate;
  $on(event: "query", listener: (event: { query: string }) => void): void;
  $disconnect(): Promise<void>;
}

// The generated client: TypeScript on Deno, compiled beside this file's compiled copy on Node.
const extension = import.meta.url.endsWith(".ts") ? ".ts" : ".js";
const clientModule = await import(
  new URL(`../../generated/prisma/client${extension}`, import.meta.url).href
) as { PrismaClient: new (options: unknown) => FleetPrismaClient };
const prisma = new clientModule.PrismaClient({
  adapter: new PrismaPg({ connectionString: url, max: 4 }),
  log: [{ emit: "event", level: "query" }],
});
let queries = 0;
/** Queries by kind: `usage` (a statement on `api_key_usage`), else the SQL's first word. */
const queryKinds: Record<string, number> = {};
prisma.$on("query", ({ query }) => {
  queries++;
  const kind = query.includes("api_key_usage") ? "usage" : /^\s*(\w+)/.exec(query)?.[1] ?? "?";
  queryKinds[kind.toUpperCase()] = (queryKinds[kind.toUpperCase()] ?? 0) + 1;
});

/** With `FLEET_USAGE_FLUSH_MS`: the service records usage, flushed at that interval. */
const usageFlushMs = process.env.FLEET_USAGE_FLUSH_MS === undefined
  ? undefined
  : Number(process.env.FLEET_USAGE_FLUSH_MS);
/** The usage driver's outcomes (`<kind>:<outcome>`), running. */
const tally: Record<string, number> = {};
/** Sums of the columns of every usage row this instance stored. */
let written: Record<string, number> = {};
/** Each usage statement stored: when it was sent, its rows, distinct (key, hour) pairs and hours. */
const statements: { at: number; rows: number; pairs: number; hours: number }[] = [];
/** Writes `label json` as one stdout line (synchronous on a pipe). */
function say(label: string, value: unknown): void {
  process.stdout.write(`${label} ${JSON.stringify(value)}\n`);
}
/**
 * The client of the storage's `usage` option, logging each statement: the
 * tally when it is sent (`USAGE_FLUSHING`, with what `written` becomes if it
 * commits) and once it committed (`USAGE_FLUSHED`).
 */
const usageClient: PrismaUsageClient = {
  $executeRawUnsafe(query, ...values) {
    const rows = JSON.parse(values[0] as string) as Record<string, unknown>[];
    const at = performance.now();
    const entry = {
      at,
      rows: rows.length,
      pairs: new Set(rows.map((row) => `${row.key_id} ${row.bucket}`)).size,
      hours: new Set(rows.map((row) => row.bucket)).size,
    };
    const sent = { ...tally };
    const next = { ...written };
    for (const row of rows) {
      for (const [column, value] of Object.entries(row)) {
        if (typeof value === "number") next[column] = (next[column] ?? 0) + value;
      }
    }
    say("USAGE_FLUSHING", { at, tally: sent, written: next });
    return prisma.$executeRawUnsafe(query, ...values).then((changed) => {
      written = next;
      statements.push(entry);
      say("USAGE_FLUSHED", { at, tally: sent, written });
      return changed;
    });
  },
  $queryRawUnsafe: (query, ...values) => prisma.$queryRawUnsafe(query, ...values),
};

const feed = createPostgresFeed({ connectionString: url });

/** What this instance's service emitted, per key id, oldest first (the test reads it). */
const events = new Map<string, { type: string; source?: string }[]>();
function record(event: ApiKeyEvent): void {
  if (!("keyId" in event) || event.keyId === undefined) return;
  const seen = events.get(event.keyId) ?? [];
  seen.push({ type: event.type, ...("source" in event ? { source: event.source } : {}) });
  events.set(event.keyId, seen);
}

/** The public revocation handler (drained before exit). */
let publicRevocation: PublicRevocationHandler | undefined;

/** The leaked-key endpoints, through the Nest binding. */
@Controller()
class LeaksController {
  private readonly partner: LeakReportHandler;
  private readonly report: PublicRevocationHandler;

  constructor(@Inject(ApiKeysService) service: ApiKeysService) {
    this.partner = createSecretScanningPartnerHandler({ service, publicKeys: [signerKey] });
    this.report = publicRevocation = createPublicRevocationHandler({ service });
  }

  @Post("github/secret-scanning")
  async secretScanning(@Req() req: LeakReportHttpRequest, @Res() res: LeakReportHttpResponse) {
    sendLeakReport(res, await this.partner(leakReportFromRequest(req)));
  }

  @Post("report-leak")
  async reportLeak(@Req() req: LeakReportHttpRequest, @Res() res: LeakReportHttpResponse) {
    sendLeakReport(res, await this.report(leakReportFromRequest(req)));
  }
}

@Controller("orders")
@UseGuards(ApiKeysGuard)
class OrdersController {
  @Get()
  @RequireScope("orders", "read")
  read() {
    return { ok: true, instance: name };
  }

  @Get("export")
  @RequireScope("orders", "write")
  export() {
    return { ok: true, instance: name };
  }
}

/** `"accepted"` or the error code of one in-process verify of `key` (as the guard calls it). */
function outcomeOf(service: ApiKeysService, key: string, scope = SCOPES[0]): Promise<string> {
  return service.authorizeRequest(
    (header) => header === "x-api-key" ? key : undefined,
    { requiredScope: scope },
  ).then(() => "accepted", (error) => String(error.code));
}

/** The keys the usage driver verifies (raw), by how each should end. */
interface UsageDriveInput {
  /** Verified with `orders:read` (accepted), and in turn with `orders:write` (scope insufficient). */
  good: string[];
  /** A revoked key. */
  revoked: string;
  /** A wrong secret for a stored prefix. */
  wrong: string;
  /** How long to verify at least. */
  ms: number;
  /** Verifications to make at least (for up to a minute past `ms`). */
  atLeast?: number;
  /** Kill this process (SIGKILL) at the first round past this many ms, after a `USAGE_KILLED` line. */
  killAfterMs?: number;
}

/** The usage driver (`FLEET_USAGE_FLUSH_MS` only). */
@Controller("admin/usage")
class UsageController {
  constructor(@Inject(ApiKeysService) private readonly service: ApiKeysService) {}

  /**
   * Verifies in process at full speed for `ms` (and `atLeast` times; one round at least), in rounds: each good key
   * (`orders:read`), one good key with `orders:write` and an unknown prefix;
   * every 8th round the revoked key and the wrong secret too (each a lookup).
   * Yields to I/O and timers after each round. Answers the queries by kind made meanwhile (the guarded
   * requests the test sends then included).
   */
  @Post("drive")
  @HttpCode(200)
  async drive(@Body() input: UsageDriveInput) {
    const unknown = input.good.map(() => generateKey({ environment: "live" }).raw);
    const count = async (kind: string, key: string, scope = SCOPES[0]) => {
      const label = `${kind}:${await outcomeOf(this.service, key, scope)}`;
      tally[label] = (tally[label] ?? 0) + 1;
    };
    const before = { ...queryKinds };
    const started = performance.now();
    let verifications = 0;
    const more = (elapsed: number) =>
      elapsed < input.ms || (verifications < (input.atLeast ?? 0) && elapsed < input.ms + 60_000);
    for (let round = 0; round === 0 || more(performance.now() - started); round++) {
      for (const key of input.good) await count("good", key);
      const i = round % input.good.length;
      await count("scope", input.good[i], { resource: "orders", level: "write" });
      await count("unknown", unknown[i]);
      verifications += input.good.length + 2;
      if (round % 8 === 0) {
        await count("revoked", input.revoked);
        await count("wrong", input.wrong);
        verifications += 2;
      }
      if (input.killAfterMs !== undefined && performance.now() - started >= input.killAfterMs) {
        say("USAGE_KILLED", { at: performance.now(), tally });
        process.kill(process.pid, "SIGKILL");
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    const during = Object.fromEntries(
      Object.entries(queryKinds).map(([kind, n]) => [kind, n - (before[kind] ?? 0)]),
    );
    return { verifications, ms: performance.now() - started, queries: during };
  }
  /**
   * Prints `USAGE_KILLED` with the drive's tally and kills this process with
   * SIGKILL (answers nothing): the test calls it while a flush statement waits
   * in PostgreSQL.
   */
  @Post("kill")
  kill(): void {
    say("USAGE_KILLED", { at: performance.now(), tally });
    process.kill(process.pid, "SIGKILL");
  }
}

@Controller("admin")
class AdminController {
  constructor(@Inject(ApiKeysService) private readonly service: ApiKeysService) {}

  @Post("create")
  create() {
    return this.service.create({ tenantId: "fleet", name: `fleet ${name}`, scopes: SCOPES });
  }

  @Post("revoke/:id")
  @HttpCode(200)
  async revoke(@Param("id") id: string) {
    await this.service.revoke(id);
    return { ok: true };
  }

  @Post("rotate/:id")
  rotate(
    @Param("id") id: string,
    @Query() query: { gracePeriodMs?: string; graceStarts?: string; maxWaitMs?: string },
  ) {
    return this.service.rotate(id, {
      gracePeriodMs: Number(query.gracePeriodMs ?? 0),
      ...(query.graceStarts === undefined
        ? {}
        : { graceStarts: query.graceStarts as RotateApiKeyInput["graceStarts"] }),
      ...(query.maxWaitMs === undefined ? {} : { maxWaitMs: Number(query.maxWaitMs) }),
    });
  }

  @Get("events/:id")
  events(@Param("id") id: string) {
    return events.get(id) ?? [];
  }

  @Get("stats")
  stats() {
    return { name, queries, feed: { ...feed.status(), stalenessMs: feed.status().stalenessMs } };
  }

  /**
   * `count` verifies in process (`authorizeRequest`, as the guard calls it):
   * `unknown` prefixes with valid checksums, or the `known` key in the
   * `x-api-key` header of a key created here first. Waits (up to 5 s) until a
   * verify of an unknown prefix makes no query: the prefix set is loaded and
   * the lookup budget of misses in it spent.
   */
  @Post("probe/:kind/:count")
  @HttpCode(200)
  async probe(@Param("kind") kind: string, @Param("count") countText: string) {
    const count = Number(countText);
    const outcomes: Record<string, number> = {};
    const verifyOnce = async (key: string) => {
      const outcome = await outcomeOf(this.service, key);
      outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
    };
    const deadline = performance.now() + 5_000;
    while (performance.now() < deadline) {
      const before = queries;
      await verifyOnce(generateKey({ environment: "live" }).raw);
      if (queries === before) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const pause = () => new Promise((resolve) => setTimeout(resolve, 200));
    const known = kind === "known" ? (await this.create()).key : undefined;
    if (known !== undefined) {
      await verifyOnce(known); // fills the cache, writes lastUsedAt once
      await pause();
    }
    for (const key of Object.keys(outcomes)) delete outcomes[key];
    const before = queries;
    const started = performance.now();
    for (let i = 0; i < count; i++) {
      await verifyOnce(known ?? generateKey({ environment: "live" }).raw);
    }
    return { queries: queries - before, outcomes, ms: performance.now() - started };
  }

  @Post("exit")
  @HttpCode(200)
  exit() {
    setTimeout(shutdown, 10);
    return { ok: true };
  }
}

/** Keys of the legacy layout `nestarc-v0`, imported as `@nestarc/api-keys` rows. */
@Controller("admin")
class LegacyController {
  constructor(@Inject(ApiKeysService) private readonly service: ApiKeysService) {}

  @Post("import-legacy")
  async importLegacy() {
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    const draw = (n: number) => Array.from({ length: n }, () => alphabet[randomInt(62)]).join("");
    const prefix = draw(12);
    const secret = draw(32);
    const id = `legacy-${prefix}`;
    const result = await this.service.importKeys([{
      id,
      tenantId: "fleet",
      name: `legacy ${name}`,
      environment: "live",
      prefix,
      hash: createHash("sha256").update(secret + FLEET_PEPPER).digest("hex"),
      hashScheme: "sha256-pepper",
      pepperVersion: 1,
      scopes: ["orders:read"],
    }]);
    if (result.imported !== 1) throw new Error("import failed");
    return { id, key: `${this.service.namespace}_live_${prefix}_${secret}` };
  }
}

@Module({
  imports: [ApiKeysModule.forRoot({
    legacyKeyLayouts: ["nestarc-v0"],
    peppers: { 1: FLEET_PEPPER },
    storage: new PrismaApiKeyStorage(prisma, {
      rotationWaits: prisma.apiKeyRotationWait,
      ...(usageFlushMs === undefined ? {} : { usage: usageClient, usageBatches: true }),
    }),
    feed,
    onEvent: record,
    storageTimeoutMs: 30_000, // the run measures the feed; first queries take seconds under load
    ...(usageFlushMs === undefined ? {} : { usage: { flushIntervalMs: usageFlushMs } }),
  })],
  controllers: [
    OrdersController,
    LeaksController,
    AdminController,
    LegacyController,
    ...(usageFlushMs === undefined ? [] : [UsageController]),
  ],
})
class FleetModule {}

console.info = () => {}; // the storage-capability line
const app = await NestFactory.create(FleetModule, { logger: ["error"], rawBody: true });
await app.listen(0, "127.0.0.1");
const address = app.getHttpServer().address() as { port: number };

let closing = false;
async function shutdown(): Promise<void> {
  if (closing) return;
  closing = true;
  await app.close(); // the module's shutdown hook: service.close() flushes the usage counts
  if (usageFlushMs !== undefined) {
    say("USAGE_REPORT", { tally, written, statements, queries: queryKinds });
  }
  await publicRevocation?.drain();
  await feed.close();
  await prisma.$disconnect();
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown());
process.stdout.write(`READY ${address.port}\n`);
