/**
 * Benchmark 6: verification with shared storage, `PrismaApiKeyStorage` on a
 * real PostgreSQL through the generated Prisma Client, with the cache on (a
 * service following `createPostgresFeed`) and off (no feed, `cache: false`).
 * Per verify: process CPU µs (`process.cpuUsage`, every thread: the driver's
 * parsing and Prisma's query building count, waiting for the database does
 * not) and queries (Prisma query events, `lastUsedAt` writes included), for a
 * cached key, a key's first use, an unknown prefix and a wrong secret, and a
 * cached key with in-process storage for reference. Floor: a synchronous
 * SHA-256 of 60 bytes, measured the same way; target: a cached verify at
 * least 1.0× its throughput. Medians of alternating rounds.
 *
 * Needs `DATABASE_URL` with both migrations (`bash scripts/start_postgres.sh`);
 * prints why and exits 0 without. Deno only (the generated client is
 * TypeScript).
 *
 * Run: `deno run -A bench/shared_storage.ts [--quick]` (or through `deno task bench`).
 *
 * @module
 */
import { createHash } from "node:crypto";
import process from "node:process";
import { PrismaPg } from "@prisma/adapter-pg";
import {
  ApiKeysService,
  generateKey,
  InMemoryApiKeyStorage,
  parseKey,
  type PrismaApiKeyClient,
  PrismaApiKeyStorage,
} from "../api_keys/mod.ts";
import { createPostgresFeed } from "../api_keys/postgres/mod.ts";
import { encodeBase62Fixed } from "../api_keys/_base62.ts";
import { crc32Ascii } from "../api_keys/key_format.ts";
import { fmt, median, printTable, QUICK, runtimeName, verdict } from "./lib/harness.ts";

const PEPPER = "bench-pepper-0123456789abcdefghijklmnopqrstuvwxyz";
const SCOPES = [{ resource: "orders", level: "read" as const }];
const ROUNDS = QUICK ? 3 : 7;
/** Operations per round: cheap cases (cached, floor) and cases that reach the database. */
const CHEAP_OPS = QUICK ? 5_000 : 20_000;
const DB_OPS = QUICK ? 50 : 200;

/** A key with a valid checksum whose secret differs from `raw`'s in its first character. */
function wrongSecret(raw: string): string {
  const parsed = parseKey(raw)!;
  const flip = parsed.secret[0] === "a" ? "b" : "a";
  const body = `${parsed.namespace}_${parsed.environment}_${parsed.prefix}_${flip}${
    parsed.secret.slice(1)
  }`;
  return body + encodeBase62Fixed(crc32Ascii(body), 6);
}

interface QueryCountingClient extends PrismaApiKeyClient {
  $on(event: "query", listener: () => void): void;
  $disconnect(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function main(url: string): Promise<void> {
  const generated = new URL("../generated/prisma/client.ts", import.meta.url);
  const { PrismaClient } = await import(generated.href) as {
    PrismaClient: new (options: unknown) => QueryCountingClient;
  };
  const prisma = new PrismaClient({
    adapter: new PrismaPg({ connectionString: url, max: 4 }),
    log: [{ emit: "event", level: "query" }],
  });
  let queries = 0;
  prisma.$on("query", () => {
    queries++;
  });
  const feed = createPostgresFeed({ connectionString: url });
  const info = console.info;
  console.info = () => {}; // the storage-capability line
  const storage = new PrismaApiKeyStorage(prisma);
  const on = new ApiKeysService({ peppers: { 1: PEPPER }, storage, feed });
  const off = new ApiKeysService({ peppers: { 1: PEPPER }, storage, cache: false });
  const maker = new ApiKeysService({ peppers: { 1: PEPPER }, storage, cache: false });
  console.info = info;
  try {
    while (!feed.status().healthy) await sleep(20);
    const known = (await maker.create({ tenantId: "bench-shared", name: "k", scopes: SCOPES }))
      .key;
    const wrong = wrongSecret(known);
    // Warm-up: the prefix set loaded, the cache filled, the first queries compiled.
    for (const service of [on, off]) {
      await service.verify(known);
      for (let i = 0; i < 20; i++) {
        await service.verify(generateKey({ environment: "live" }).raw).catch(() => {});
        await service.verify(wrong).catch(() => {});
      }
    }
    await sleep(300);
    // Fresh keys for the first-use rows, made before timing (their notices reach `on`).
    const fresh = { on: [] as string[], off: [] as string[] };
    for (const side of ["on", "off"] as const) {
      for (let i = 0; i < ROUNDS * DB_OPS; i++) {
        fresh[side].push(
          (await maker.create({ tenantId: "bench-shared", name: `f${i}`, scopes: SCOPES })).key,
        );
      }
    }
    await sleep(500);
    // Unknown keys made before timing too (making one costs random bytes and a CRC).
    const unknown = Array.from(
      { length: ROUNDS * DB_OPS },
      () => generateKey({ environment: "live" }).raw,
    );
    const local = new ApiKeysService({
      peppers: { 1: PEPPER },
      storage: new InMemoryApiKeyStorage(),
    });
    const localKey =
      (await local.create({ tenantId: "bench-shared", name: "k", scopes: SCOPES })).key;
    await local.verify(localKey);

    const sixty = "x".repeat(60);
    type Case = { name: string; ops: number; op: (i: number) => unknown };
    const cases: Case[] = [
      {
        name: "floor: sync SHA-256 (60 B)",
        ops: CHEAP_OPS,
        op: () => createHash("sha256").update(sixty).digest(),
      },
    ];
    for (const [side, service] of [["on", on], ["off", off]] as const) {
      const cache = side === "on" ? "cache on (feed)" : "cache off";
      let next = 0;
      let nextUnknown = 0;
      cases.push(
        {
          name: `${cache}: cached key`,
          ops: side === "on" ? CHEAP_OPS : DB_OPS,
          op: () => service.verify(known),
        },
        {
          name: `${cache}: first use of a key`,
          ops: DB_OPS,
          op: () => service.verify(fresh[side][next++]),
        },
        {
          name: `${cache}: unknown prefix`,
          ops: DB_OPS,
          op: () => service.verify(unknown[nextUnknown++]).catch(() => {}),
        },
        {
          name: `${cache}: wrong secret`,
          ops: DB_OPS,
          op: () => service.verify(wrong).catch(() => {}),
        },
      );
    }
    cases.push({
      name: "reference: in-process storage, cached key",
      ops: CHEAP_OPS,
      op: () => local.verify(localKey),
    });
    const cpu = cases.map(() => [] as number[]);
    const perQuery = cases.map(() => [] as number[]);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [index, c] of cases.entries()) {
        // Each cheap case runs once unmeasured first: a loop of cheap verifies leaves collection
        // work (about 1 µs per op here) to whatever case runs next.
        if (c.ops === CHEAP_OPS) {
          for (let i = 0; i < c.ops; i++) await c.op(i);
        }
        const before = process.cpuUsage();
        const queriesBefore = queries;
        for (let i = 0; i < c.ops; i++) await c.op(i);
        if (c.ops === DB_OPS) await sleep(50); // `lastUsedAt` writes are not awaited: let them land
        const used = process.cpuUsage(before);
        cpu[index].push((used.user + used.system) / c.ops);
        perQuery[index].push((queries - queriesBefore) / c.ops);
      }
    }
    const sha = median(cpu[0]);
    const rows = cases.map((c, index) => {
      const us = median(cpu[index]);
      const cached = c.name === "cache on (feed): cached key";
      return [
        c.name,
        fmt(us),
        fmt(median(perQuery[index]), 3),
        c.ops === CHEAP_OPS && !c.name.startsWith("floor")
          ? `${fmt(sha / us)}x SHA-256 throughput`
          : "",
        cached ? ">= 1.00x" : "",
        cached ? verdict(sha / us >= 1) : "",
      ];
    });
    printTable(
      `Benchmark 6 — shared storage (PrismaApiKeyStorage, PostgreSQL on loopback) on ${runtimeName()}:` +
        ` CPU µs and queries per verify, medians of ${ROUNDS} alternating rounds` +
        (QUICK ? " (quick)" : ""),
      ["case", "CPU µs/verify", "queries/verify", "ratio", "target", ""],
      rows,
    );
  } finally {
    await feed.close();
    await prisma.$disconnect();
  }
}

const url = process.env.DATABASE_URL;
if (!url) {
  console.log(
    "\nBenchmark 6 — shared storage: skipped, DATABASE_URL is not set " +
      "(bash scripts/start_postgres.sh prints it)",
  );
} else {
  await main(url);
}
