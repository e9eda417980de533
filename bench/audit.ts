/**
 * Benchmark: the audit log's added cost per change. One `ApiKeysService`
 * creates and revokes keys with and without the `audit` option, in memory
 * and on a real PostgreSQL (`PrismaApiKeyStorage` with `{ audit: prisma }`,
 * migration 0017): ms per change (median of alternating rounds) and Prisma
 * queries per change. Target: at most one statement added per change besides
 * BEGIN/COMMIT (`MISSED` past it); the time is printed, not judged.
 *
 * Needs `DATABASE_URL` for the PostgreSQL rows (prints why it skips them
 * without). Deno only (the generated client is TypeScript).
 *
 * Run: `deno run -A bench/audit.ts [--quick]` (or through `deno task bench`).
 *
 * @module
 */
import process from "node:process";
import { PrismaPg } from "@prisma/adapter-pg";
import {
  ApiKeysService,
  type ApiKeyStorage,
  InMemoryApiKeyStorage,
  type PrismaApiKeyClient,
  PrismaApiKeyStorage,
  type PrismaUsageClient,
} from "../api_keys/mod.ts";
import { fmt, median, printTable, QUICK, runtimeName, verdict } from "./lib/harness.ts";

const PEPPER = "bench-pepper-0123456789abcdefghijklmnopqrstuvwxyz";
const SCOPES = [{ resource: "orders", level: "read" as const }];
const ROUNDS = QUICK ? 3 : 7;
const PER_ROUND = QUICK ? 20 : 60;

/** A service over `storage`, with the audit log or not (its start-up lines silenced). */
function serviceOf(storage: ApiKeyStorage, audit: boolean): ApiKeysService {
  const info = console.info;
  console.info = () => {};
  try {
    return new ApiKeysService({
      peppers: { 1: PEPPER },
      storage,
      cache: false,
      ...(audit ? { audit: { checkpointKey: "bench-audit-checkpoint-key-0123456789ab" } } : {}),
    });
  } finally {
    console.info = info;
  }
}

/** ms per change (a create or a revoke) of `PER_ROUND` create+revoke pairs. */
async function round(service: ApiKeysService, tenantId: string): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < PER_ROUND; i++) {
    const { id } = await service.create({ tenantId, name: `k${i}`, scopes: SCOPES });
    await service.revoke(id);
  }
  return (performance.now() - start) / (2 * PER_ROUND);
}

/** Medians of alternating rounds of `plain` and `audited`. */
async function compare(plain: ApiKeysService, audited: ApiKeysService, tenantId: string) {
  const times: [number[], number[]] = [[], []];
  await round(plain, tenantId); // warm-up
  await round(audited, tenantId);
  for (let r = 0; r < ROUNDS; r++) {
    times[0].push(await round(plain, tenantId));
    times[1].push(await round(audited, tenantId));
  }
  return times.map(median) as [number, number];
}

interface BenchClient extends PrismaApiKeyClient, PrismaUsageClient {
  $on(event: "query", listener: (event: { query: string }) => void): void;
  $disconnect(): Promise<void>;
}

const rows: string[][] = [];
const tenantId = `bench-${crypto.randomUUID()}`;
const [plainMs, auditMs] = await compare(
  serviceOf(new InMemoryApiKeyStorage(), false),
  serviceOf(new InMemoryApiKeyStorage(), true),
  tenantId,
);
rows.push(["memory", fmt(plainMs, 3), fmt(auditMs, 3), fmt(auditMs - plainMs, 3), "-", "-"]);

const url = process.env.DATABASE_URL;
if (url) {
  const module = await import(
    new URL("../generated/prisma/client.ts", import.meta.url).href
  ) as { PrismaClient: new (options: unknown) => BenchClient };
  const prisma = new module.PrismaClient({
    adapter: new PrismaPg({ connectionString: url, max: 4 }),
    log: [{ emit: "event", level: "query" }],
  });
  let statements = 0;
  prisma.$on("query", ({ query }) => {
    if (!/^\s*(BEGIN|COMMIT|ROLLBACK)\b/i.test(query)) statements++;
  });
  const plain = serviceOf(new PrismaApiKeyStorage(prisma), false);
  const audited = serviceOf(new PrismaApiKeyStorage(prisma, { audit: prisma }), true);
  const [pgPlain, pgAudit] = await compare(plain, audited, tenantId);
  const perChange = async (service: ApiKeysService) => {
    statements = 0;
    const { id } = await service.create({ tenantId, name: "counted", scopes: SCOPES });
    await service.revoke(id);
    return statements / 2;
  };
  const [plainStatements, auditStatements] = [await perChange(plain), await perChange(audited)];
  const added = auditStatements - plainStatements;
  rows.push([
    "PostgreSQL",
    fmt(pgPlain, 3),
    fmt(pgAudit, 3),
    fmt(pgAudit - pgPlain, 3),
    fmt(added, 1),
    verdict(added <= 1),
  ]);
  await prisma.$disconnect();
} else {
  console.log("\n(audit on PostgreSQL: skipped, DATABASE_URL is not set)");
}

printTable(
  `Benchmark — audit log: added cost per change (create or revoke), ${runtimeName()}`,
  ["storage", "ms/change off", "ms/change on", "added ms", "statements added", "≤ 1"],
  rows,
);
