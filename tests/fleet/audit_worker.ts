/**
 * One instance of the audit fleet test (tests/fleet/audit_test.ts), run by
 * Deno from source and by Node from the npm build: waits until
 * `AUDIT_START_AT`, then creates, rotates and revokes `AUDIT_ROUNDS` keys of
 * tenant `AUDIT_TENANT` through an `ApiKeysService` with the audit log over
 * `PrismaApiKeyStorage` (option `audit`), as actor `FLEET_NAME`; prints
 * `DONE <changes>` and exits.
 *
 * @module
 */
import process from "node:process";
import { PrismaPg } from "@prisma/adapter-pg";
import {
  ApiKeysService,
  type PrismaApiKeyClient,
  PrismaApiKeyStorage,
  type PrismaUsageClient,
} from "../../api_keys/mod.ts";
import { FLEET_PEPPER } from "./fleet_pepper.ts";

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};
const actor = env("FLEET_NAME");
const tenantId = env("AUDIT_TENANT");
const rounds = Number(env("AUDIT_ROUNDS"));
const startAt = Number(env("AUDIT_START_AT"));

interface WorkerClient extends PrismaApiKeyClient, PrismaUsageClient {
  $disconnect(): Promise<void>;
}
const extension = import.meta.url.endsWith(".ts") ? ".ts" : ".js";
const clientModule = await import(
  new URL(`../../generated/prisma/client${extension}`, import.meta.url).href
) as { PrismaClient: new (options: unknown) => WorkerClient };
const prisma = new clientModule.PrismaClient({
  adapter: new PrismaPg({ connectionString: env("DATABASE_URL"), max: 4 }),
  transactionOptions: { maxWait: 30_000, timeout: 30_000 },
});
const service = new ApiKeysService({
  peppers: { 1: FLEET_PEPPER },
  storage: new PrismaApiKeyStorage(prisma, { audit: prisma }),
  cache: false,
  // Generous: the three instances queue on the tenant's chain head on a loaded machine.
  storageTimeoutMs: 30_000,
  audit: { checkpointKey: "the-fleet-audit-checkpoint-key-0123456789" },
});

await new Promise((resolve) => setTimeout(resolve, Math.max(0, startAt - Date.now())));
let changes = 0;
// Two chains of changes at once per instance: more interleaving on the tenant's head.
await Promise.all([0, 1].map(async (lane) => {
  for (let i = lane; i < rounds; i += 2) {
    const context = { actor, requestId: `${actor}-${i}` };
    const { id } = await service.create(
      { tenantId, name: `${actor}-${i}`, scopes: [{ resource: "orders", level: "read" }] },
      context,
    );
    const rotated = await service.rotate(id, { gracePeriodMs: 60_000 }, context);
    await service.revokeForTenant(tenantId, rotated.id, context);
    changes += 3;
  }
}));
process.stdout.write(`DONE ${changes}\n`);
await prisma.$disconnect();
