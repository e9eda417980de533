/**
 * One instance of the fleet test: a Nest app with `ApiKeysModule` over
 * `PrismaApiKeyStorage` (the generated Prisma Client over `@prisma/adapter-pg`)
 * following `createPostgresFeed`, on 127.0.0.1. Runs on Deno from the sources
 * and on Node from the npm build (`fleet_test.ts` compiles this file and
 * overlays `npm/esm/` on the sources it imports).
 *
 * Routes: `GET /orders` behind `ApiKeysGuard` (scope `orders:read`); the
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
 * Environment: `DATABASE_URL`, `FLEET_NAME`, `FLEET_SIGNER_ID`,
 * `FLEET_SIGNER_PEM`.
 *
 * @module
 */
import "reflect-metadata";
import process from "node:process";
import { createHash, randomInt } from "node:crypto";
import {
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
  type PublicRevocationHandler,
  type RotateApiKeyInput,
  type SecretScanningPublicKey,
} from "../../api_keys/mod.ts";
import {
  ApiKeysGuard,
  ApiKeysModule,
  leakReportFromRequest,
  type LeakReportHttpRequest,
  type LeakReportHttpResponse,
  RequireScope,
  sendLeakReport,
} from "../../api_keys/nest/mod.ts";
import { createPostgresFeed } from "../../api_keys/postgres/mod.ts";

/** The pepper every instance shares (a test value). */
export const FLEET_PEPPER = "fleet-test-pepper-0123456789abcdefghijklmnop";
const SCOPES = [{ resource: "orders", level: "read" as const }];

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
interface FleetPrismaClient extends PrismaApiKeyClient {
  apiKeyRotationWait: PrismaRotationWaitDelegate;
  $on(event: "query", listener: () => void): void;
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
prisma.$on("query", () => {
  queries++;
});

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
      const outcome = await this.service.authorizeRequest(
        (header) => header === "x-api-key" ? key : undefined,
        { requiredScope: SCOPES[0] },
      ).then(() => "accepted", (error) => String(error.code));
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
    storage: new PrismaApiKeyStorage(prisma, { rotationWaits: prisma.apiKeyRotationWait }),
    feed,
    onEvent: record,
    storageTimeoutMs: 30_000, // the run measures the feed; first queries take seconds under load
  })],
  controllers: [OrdersController, LeaksController, AdminController, LegacyController],
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
  await app.close();
  await publicRevocation?.drain();
  await feed.close();
  await prisma.$disconnect();
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown());
process.stdout.write(`READY ${address.port}\n`);
