/**
 * Benchmark of the API-key core. A plain script (not `Deno.bench`): each case
 * runs in rounds alternating with its floor measured in the same process, and
 * the table prints medians and ratios. Bounded to well under 60 s.
 *
 * Run: `deno run -A bench/api_keys_bench.ts`
 *
 * @module
 */
import { createHash } from "node:crypto";
import {
  type ApiKeyRecord,
  ApiKeysService,
  InMemoryApiKeyStorage,
  parseKey,
} from "../api_keys/mod.ts";

const PEPPER = "bench-pepper-0123456789abcdefghijklmnopqrstuvwxyz";
const ROUNDS = 7;
const ROUND_MS = 150;
const SCOPES = [{ resource: "orders", level: "read" as const }];

type Op = () => unknown;

/** Calibrates a batch size so one batch takes about ROUND_MS. */
async function calibrate(op: Op): Promise<number> {
  let n = 1;
  for (;;) {
    const start = performance.now();
    for (let i = 0; i < n; i++) await op();
    const elapsed = performance.now() - start;
    if (elapsed >= ROUND_MS / 4 || n >= 1 << 22) {
      return Math.max(1, Math.round(n * ROUND_MS / Math.max(elapsed, 0.01)));
    }
    n *= 2;
  }
}

async function timeBatch(op: Op, n: number, sync: boolean): Promise<number> {
  const start = performance.now();
  if (sync) { for (let i = 0; i < n; i++) op(); }
  else for (let i = 0; i < n; i++) await op();
  return ((performance.now() - start) * 1000) / n; // µs per op
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

interface Row {
  name: string;
  us: number;
  floorName: string;
  floorUs: number;
  /** Printed ratio and the target it is held to. */
  ratio: number;
  ratioLabel: string;
  target?: string;
  pass?: boolean;
}

async function compare(
  name: string,
  op: Op,
  floorName: string,
  floor: Op,
  floorSync: boolean,
): Promise<{ us: number; floorUs: number }> {
  const [n, m] = [await calibrate(op), await calibrate(floor)];
  const a: number[] = [];
  const b: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    a.push(await timeBatch(op, n, false));
    b.push(await timeBatch(floor, m, floorSync));
  }
  void name;
  void floorName;
  return { us: median(a), floorUs: median(b) };
}

async function setup(stored: number, cache: boolean) {
  const storage = new InMemoryApiKeyStorage();
  const service = new ApiKeysService({
    peppers: { 1: PEPPER },
    storage,
    cache: cache ? { ttlMs: 60_000 } : false,
  });
  const keys: { id: string; key: string }[] = [];
  for (let i = 0; i < 10; i++) {
    keys.push(await service.create({ tenantId: "bench", name: `k${i}`, scopes: SCOPES }));
  }
  const template = (await storage.findById(keys[0].id))!;
  for (let i = keys.length; i < stored; i++) {
    const record: ApiKeyRecord = {
      ...template,
      id: `filler-${i}`,
      tenantId: `tenant-${i % 5000}`,
      prefix: `F${String(i).padStart(11, "0")}`,
    };
    await storage.insert(record);
  }
  return { storage, service, keys };
}

function variantSecret(raw: string): string {
  const parsed = parseKey(raw)!;
  const flip = parsed.secret[0] === "a" ? "b" : "a";
  // a wrong secret with a valid checksum, built with the same generator the library uses
  const { encodeBase62Fixed } = BASE62;
  const body = `${parsed.namespace}_${parsed.environment}_${parsed.prefix}_${flip}${
    parsed.secret.slice(1)
  }`;
  return body + encodeBase62Fixed(CRC.crc32Ascii(body), 6);
}

const BASE62 = await import("../api_keys/base62.ts");
const CRC = await import("../api_keys/crc32.ts");

async function main() {
  const began = performance.now();
  const sixty = "x".repeat(60);
  const sha256: Op = () => createHash("sha256").update(sixty).digest();
  const rows: Row[] = [];

  const hmacKey = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(PEPPER),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign", "verify"],
  );
  const signature = new Uint8Array(
    await crypto.subtle.sign("HMAC", hmacKey, new TextEncoder().encode("a".repeat(32))),
  );
  const subtleVerify: Op = async () => {
    await crypto.subtle.verify(
      "HMAC",
      hmacKey,
      signature,
      new TextEncoder().encode("a".repeat(32)),
    );
  };

  for (const stored of [10, 100_000]) {
    const { service, keys } = await setup(stored, true);
    const key = keys[3].key;
    await service.verify(key);
    const r = await compare("cached", () => service.verify(key), "sha256", sha256, true);
    const ratio = r.floorUs / r.us;
    rows.push({
      name: `cached valid verify (${stored.toLocaleString("en")} keys)`,
      us: r.us,
      floorName: "sync SHA-256 (60 B)",
      floorUs: r.floorUs,
      ratio,
      ratioLabel: `${ratio.toFixed(2)}x throughput`,
      target: ">= 0.40x",
      pass: ratio >= 0.4,
    });
    if (stored === 10) {
      const a = await compare(
        "authorize",
        () => service.authorize(key, { requiredScope: { resource: "orders", level: "read" } }),
        "sha256",
        sha256,
        true,
      );
      rows.push({
        name: "authorize, cached (10 keys)",
        us: a.us,
        floorName: "sync SHA-256 (60 B)",
        floorUs: a.floorUs,
        ratio: a.floorUs / a.us,
        ratioLabel: `${(a.floorUs / a.us).toFixed(2)}x throughput`,
      });
    }
  }

  const { service: uncached, keys } = await setup(10, false);
  const valid = keys[1].key;
  const full: Op = () => uncached.verify(valid);
  const swallow = (op: () => Promise<unknown>): Op => () => op().catch(() => {});
  const malformed = swallow(() => uncached.verify("ak_live_garbage"));
  const badChecksum = swallow(() =>
    uncached.verify(valid.slice(0, -1) + (valid.at(-1) === "a" ? "b" : "a"))
  );
  const fullVsSubtle = await compare("full", full, "subtle", subtleVerify, false);
  rows.push({
    name: "full verify, uncached",
    us: fullVsSubtle.us,
    floorName: "awaited subtle HMAC verify",
    floorUs: fullVsSubtle.floorUs,
    ratio: fullVsSubtle.us / fullVsSubtle.floorUs,
    ratioLabel: `${(fullVsSubtle.us / fullVsSubtle.floorUs).toFixed(2)}x cost`,
    target: "<= 1.20x",
    pass: fullVsSubtle.us / fullVsSubtle.floorUs <= 1.2,
  });
  for (
    const [name, op] of [["malformed key rejected", malformed], [
      "bad checksum rejected",
      badChecksum,
    ]] as const
  ) {
    const r = await compare(name, op, "full", full, false);
    rows.push({
      name,
      us: r.us,
      floorName: "full verify, uncached",
      floorUs: r.floorUs,
      ratio: r.floorUs / r.us,
      ratioLabel: `${(r.floorUs / r.us).toFixed(1)}x faster`,
      target: ">= 5x",
      pass: r.floorUs / r.us >= 5,
    });
  }
  const other = await new ApiKeysService({
    peppers: { 1: PEPPER },
    storage: new InMemoryApiKeyStorage(),
  })
    .create({ tenantId: "x", name: "x", scopes: SCOPES });
  const extra: [string, Op][] = [
    ["unknown prefix (dummy verify)", swallow(() => uncached.verify(other.key))],
    ["wrong secret", swallow(() => uncached.verify(variantSecret(valid)))],
    ["create", () => uncached.create({ tenantId: "bench-create", name: "c", scopes: SCOPES })],
    ["list (tenant of 10 keys)", () => uncached.list("bench")],
  ];
  let rotateTarget =
    (await uncached.create({ tenantId: "bench-rot", name: "r", scopes: SCOPES })).id;
  extra.push(["rotate", async () => {
    rotateTarget = (await uncached.rotate(rotateTarget)).id;
  }]);
  for (const [name, op] of extra) {
    const r = await compare(name, op, "full", full, false);
    rows.push({
      name,
      us: r.us,
      floorName: "full verify, uncached",
      floorUs: r.floorUs,
      ratio: r.us / r.floorUs,
      ratioLabel: `${(r.us / r.floorUs).toFixed(2)}x cost`,
    });
  }

  const runtime = typeof (globalThis as { Deno?: unknown }).Deno === "object"
    ? `Deno ${(globalThis as unknown as { Deno: { version: { deno: string } } }).Deno.version.deno}`
    : `Node ${(globalThis as unknown as { process: { version: string } }).process.version}`;
  console.log(`api-keys benchmark on ${runtime}: medians of ${ROUNDS} alternating rounds\n`);
  const header = ["case", "µs/op", "floor", "floor µs/op", "ratio", "target", ""];
  const lines = rows.map((row) => [
    row.name,
    row.us.toFixed(2),
    row.floorName,
    row.floorUs.toFixed(2),
    row.ratioLabel,
    row.target ?? "",
    row.pass === undefined ? "" : row.pass ? "ok" : "MISSED",
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  for (const line of [header, widths.map((w) => "-".repeat(w)), ...lines]) {
    console.log(line.map((cell, i) => cell.padEnd(widths[i])).join("  ").trimEnd());
  }
  console.log(`\nfinished in ${((performance.now() - began) / 1000).toFixed(1)} s`);
}

await main();
