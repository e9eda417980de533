/**
 * Counts the library files a request runs through: the files of the built
 * npm package (`npm/esm/`) with at least one function executed during one
 * warm envelope request (a Nest app with `SafeResponseModule` on defaults)
 * and one warm guarded request (a route behind `ApiKeysGuard` with a
 * `RequireScope`), each in process over loopback HTTP on Node, measured with
 * V8 precise coverage (`node:inspector`: counters reset after a warm-up, one
 * request, counters read). Prints both counts and the file lists; the targets
 * (at most 10 files each) are reported, not enforced. Exits non-zero only when
 * it cannot measure.
 *
 * Run: `deno task measure:paths` (builds `npm/` first when it is missing;
 * `--build` rebuilds it).
 *
 * @module
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { OUT_DIR, ROOT } from "./npm_build/config.ts";

/** The most library files a path may touch (issue targets). */
const TARGET = 10;

/** The probe, run by Node inside `npm/` so its imports resolve to the built package. */
const PROBE = String.raw`
import "reflect-metadata";
import { Session } from "node:inspector/promises";
import { Controller, Get, Module, UseGuards } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import { ApiKeysService, InMemoryApiKeyStorage } from "./esm/api_keys/mod.js";
import { ApiKeysGuard, ApiKeysModule, RequireScope } from "./esm/api_keys/nest/mod.js";
import { SafeResponseModule } from "./esm/safe_response/nest/mod.js";

const library = new URL("./esm/", import.meta.url).href;

function route(controller, name, decorators) {
  const descriptor = Object.getOwnPropertyDescriptor(controller.prototype, name);
  for (const decorate of decorators) decorate(controller.prototype, name, descriptor);
}

class ItemsController {
  get() {
    return { id: 1, name: "widget" };
  }
}
route(ItemsController, "get", [Get()]);
Controller("items")(ItemsController);
class EnvelopeModule {}
Module({ imports: [SafeResponseModule.register()], controllers: [ItemsController] })(EnvelopeModule);

class OrdersController {
  get() {
    return { ok: true };
  }
}
route(OrdersController, "get", [Get(), RequireScope("orders", "read")]);
UseGuards(ApiKeysGuard)(OrdersController);
Controller("orders")(OrdersController);
class GuardModule {}
Module({
  imports: [ApiKeysModule.forRoot({
    peppers: { 1: "measure-pepper-0123456789abcdefghijklmnopqrstuvwxyz" },
    storage: new InMemoryApiKeyStorage(),
  })],
  controllers: [OrdersController],
})(GuardModule);

const session = new Session();
session.connect();
await session.post("Profiler.enable");
await session.post("Profiler.startPreciseCoverage", { callCount: true, detailed: false });

/** Library files with a function run during one warm request to path (after a warm-up). */
async function measure(module, path, headers = {}, prepare = async () => {}) {
  const app = await NestFactory.create(module, { logger: false });
  await prepare(app, headers);
  await app.listen(0, "127.0.0.1");
  const url = (await app.getUrl()).replace("[::1]", "127.0.0.1") + path;
  const send = async () => {
    const response = await fetch(url, { headers });
    const text = await response.text();
    if (response.status !== 200) throw new Error(path + " answered " + response.status + ": " + text);
  };
  for (let i = 0; i < 20; i++) await send();
  await session.post("Profiler.takePreciseCoverage"); // resets the counters
  await send();
  const { result } = await session.post("Profiler.takePreciseCoverage");
  await app.close();
  return result
    .filter((script) => script.url.startsWith(library))
    .filter((script) => script.functions.some((fn) => fn.ranges[0].count > 0))
    .map((script) => script.url.slice(library.length))
    .sort();
}

const envelope = await measure(EnvelopeModule, "/items");
const guarded = await measure(GuardModule, "/orders", {}, async (app, headers) => {
  const { key } = await app.get(ApiKeysService).create({
    tenantId: "measure",
    name: "measure",
    scopes: [{ resource: "orders", level: "read" }],
  });
  headers["x-api-key"] = key;
});
console.log("RESULT " + JSON.stringify({ envelope, guarded }));
`;

async function run(
  cmd: string,
  args: string[],
  cwd: string,
): Promise<{ code: number; out: string }> {
  const output = await new Deno.Command(cmd, { args, cwd, stdout: "piped", stderr: "inherit" })
    .output();
  return { code: output.code, out: new TextDecoder().decode(output.stdout) };
}

if (import.meta.main) {
  if (Deno.args.includes("--build") || !existsSync(join(OUT_DIR, "esm", "mod.js"))) {
    const built = await run(
      Deno.execPath(),
      ["run", "-A", "scripts/build_npm.ts", "--skip-checks"],
      ROOT,
    );
    if (built.code !== 0) {
      console.error("measure_paths: the npm build failed");
      Deno.exit(1);
    }
  }
  const probe = join(OUT_DIR, ".measure_paths.mjs");
  Deno.writeTextFileSync(probe, PROBE);
  let measured: { envelope: string[]; guarded: string[] } | undefined;
  try {
    const { code, out } = await run("node", [probe], OUT_DIR);
    const line = out.split("\n").find((text) => text.startsWith("RESULT "));
    if (code === 0 && line !== undefined) measured = JSON.parse(line.slice("RESULT ".length));
  } finally {
    Deno.removeSync(probe);
  }
  if (measured === undefined || measured.envelope.length === 0 || measured.guarded.length === 0) {
    console.error("measure_paths: could not measure (see the probe's output above)");
    Deno.exit(1);
  }
  for (const [name, files] of Object.entries(measured)) {
    const verdict = files.length <= TARGET ? "within" : "OVER";
    console.log(`${name} path: ${files.length} library files (${verdict} the target of ${TARGET})`);
    for (const file of files) console.log(`  ${file}`);
  }
}
