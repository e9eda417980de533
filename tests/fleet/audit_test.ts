/**
 * The audit log on one PostgreSQL shared by three instances (two Node on
 * the npm build, one Deno from source), each creating, rotating and revoking
 * keys of one tenant at the same time: one chain without gaps (1 to N, N
 * the changes made) that verifies, with every instance's records. Skips
 * without `DATABASE_URL` (fails under `CI=true`).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { ApiKeysService, PrismaApiKeyStorage } from "../../api_keys/mod.ts";
import { createPrismaClient, databaseReady, probeDatabase } from "../postgres/prisma_client.ts";
import { prepareNodeTree } from "./harness.ts";
import { FLEET_PEPPER } from "./fleet_pepper.ts";
import { ROOT } from "../../scripts/npm_build/config.ts";

const url = Deno.env.get("DATABASE_URL");
const ROUNDS = 6;

async function probe(): Promise<string | undefined> {
  const problem = await probeDatabase(url);
  if (problem !== undefined) return problem;
  const prisma = await createPrismaClient(url!);
  try {
    await prisma.$queryRawUnsafe("SELECT 1 FROM api_key_audit_heads LIMIT 1");
    return undefined;
  } catch {
    return "the audit migration (0017_api_key_audit) is not applied";
  } finally {
    await prisma.$disconnect();
  }
}

/** Runs one worker to its end: its exit code and output. */
async function run(name: string, command: string, args: string[], env: Record<string, string>) {
  const output = await new Deno.Command(command, {
    args,
    cwd: ROOT,
    env: { ...env, FLEET_NAME: name },
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).output();
  return { name, code: output.code, stdout: new TextDecoder().decode(output.stdout) };
}

if (databaseReady("the audit log of a fleet on one PostgreSQL", await probe())) {
  describe("the audit log of a fleet: two Node instances (npm build), one Deno (sources)", () => {
    it("concurrent creates, rotations and revokes of one tenant make one gap-free chain that verifies", async () => {
      const tree = await prepareNodeTree([
        "tests/fleet/audit_worker.ts",
        "generated/prisma/client.ts",
      ]);
      const tenantId = `fleet-audit-${crypto.randomUUID()}`;
      const env = {
        DATABASE_URL: url!,
        AUDIT_TENANT: tenantId,
        AUDIT_ROUNDS: String(ROUNDS),
        // All three start together, once each has loaded.
        AUDIT_START_AT: String(Date.now() + 5_000),
      };
      const node = join(tree, "tests", "fleet", "audit_worker.js");
      const results = await Promise.all([
        run("node-1", "node", [node], env),
        run("node-2", "node", [node], env),
        run("deno", Deno.execPath(), ["run", "-A", "tests/fleet/audit_worker.ts"], env),
      ]);
      await Deno.remove(tree, { recursive: true }).catch(() => {});
      for (const result of results) {
        assert.equal(result.code, 0, `${result.name} failed`);
        assert.match(result.stdout, new RegExp(`DONE ${3 * ROUNDS}`), result.name);
      }
      const prisma = await createPrismaClient(url!);
      const info = console.info;
      console.info = () => {};
      const service = new ApiKeysService({
        peppers: { 1: FLEET_PEPPER },
        storage: new PrismaApiKeyStorage(prisma, { audit: prisma }),
        audit: { checkpointKey: "the-fleet-audit-checkpoint-key-0123456789" },
      });
      console.info = info;
      try {
        const total = 3 * 3 * ROUNDS;
        const verified = await service.verifyAuditLog(tenantId);
        assert.deepEqual(verified.ok && [verified.checked, verified.head?.seq], [total, total]);
        const seqs: number[] = [];
        const actors = new Map<string, number>();
        let cursor: string | null = null;
        do {
          const page: Awaited<ReturnType<typeof service.auditLog>> = await service.auditLog(
            tenantId,
            { limit: 100, cursor },
          );
          for (const r of page.records) {
            seqs.push(r.seq);
            actors.set(r.actor, (actors.get(r.actor) ?? 0) + 1);
          }
          cursor = page.nextCursor;
        } while (cursor !== null);
        assert.deepEqual(seqs.reverse(), Array.from({ length: total }, (_, i) => i + 1));
        assert.deepEqual(Object.fromEntries([...actors].sort()), {
          deno: 3 * ROUNDS,
          "node-1": 3 * ROUNDS,
          "node-2": 3 * ROUNDS,
        });
      } finally {
        await prisma.$disconnect();
      }
    });
  });
}
