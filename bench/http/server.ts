/**
 * One benchmark server: `server.ts <platform> <variant> [--keys N] [--keys-file PATH]
 * [--cache-max N]`; `server.ts deno-serve bare` is a bare `Deno.serve` handler
 * answering `ITEM` as JSON (the floor of the Fetch benchmark, Deno only). Prints `{"port": N}` when listening on 127.0.0.1, then
 * answers each stdin line `stats` with one JSON line of its CPU time and
 * memory (`memory`: the same after a GC, when the runtime exposes one);
 * `exit` closes it.
 *
 * @module
 */
import process from "node:process";
import { writeFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { ApiKeysService } from "../../api_keys/mod.ts";
import { createBenchApp, ITEM, type Platform, type Variant } from "./apps.ts";

const [platform, variant] = process.argv.slice(2) as [Platform | "deno-serve", Variant];
const flag = (name: string) => {
  const index = process.argv.indexOf(name);
  return index === -1 ? undefined : process.argv[index + 1];
};
const keyCount = Number(flag("--keys") ?? 0);
const cacheMax = flag("--cache-max");

/** A bare `Deno.serve` server: what one request costs Deno without any framework. */
function bareDenoServe() {
  const deno = (globalThis as unknown as {
    Deno: {
      serve(
        options: { port: number; hostname: string; onListen(): void },
        handler: () => Response,
      ): { addr: { port: number }; shutdown(): Promise<void> };
    };
  }).Deno;
  const server = deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen: () => {} },
    () => Response.json(ITEM),
  );
  return {
    port: server.addr.port,
    close: () => server.shutdown(),
  };
}

const fetchServer = platform === "deno-serve" ? bareDenoServe() : undefined;
const app = fetchServer === undefined
  ? await createBenchApp(platform as Platform, variant, {
    cache: cacheMax === undefined ? undefined : { maxEntries: Number(cacheMax) },
  })
  : undefined;
await app?.listen(0, "127.0.0.1");
const keys: string[] = [];
if (app !== undefined && keyCount > 0) {
  const service = app.get(ApiKeysService);
  for (let i = 0; i < keyCount; i++) {
    const scopes = [{ resource: "items", level: "read" as const }];
    keys.push((await service.create({ tenantId: `t${i % 100}`, name: `k${i}`, scopes })).key);
  }
  writeFileSync(flag("--keys-file")!, keys.join("\n"));
}
const port = fetchServer?.port ?? (app!.getHttpServer().address() as { port: number }).port;
console.log(JSON.stringify({ port }));

const gc = (globalThis as { gc?: () => void }).gc;
createInterface({ input: process.stdin }).on("line", async (line) => {
  if (line === "stats" || line === "memory") {
    if (line === "memory") gc?.();
    const cpu = process.cpuUsage();
    const memory = process.memoryUsage();
    console.log(JSON.stringify({
      cpuUs: cpu.user + cpu.system,
      rss: memory.rss,
      heapUsed: memory.heapUsed,
      heapTotal: memory.heapTotal,
    }));
  } else if (line === "exit") {
    await (fetchServer?.close() ?? app!.close());
    process.exit(0);
  }
});
