/**
 * Consumer apps: builds and packs the npm package, installs the tarball into
 * each app under this folder (real Node projects with their own package.json),
 * copies the routes and checks all apps share (`shared/`) into each app,
 * compiles each app with its own TypeScript settings, starts it on 127.0.0.1
 * and hits it with real requests (`node --test`). Prints one `# pass N` /
 * `# fail N` summary for all apps; exits non-zero when anything failed.
 *
 * ```sh
 * deno run -A tests/consumers/run.ts [app-name ...]
 * ```
 *
 * @module
 */
import { copyFileSync, cpSync, existsSync, readdirSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { inherit } from "../../scripts/npm_build/run.ts";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, "..", "..");
/** Where every app's package.json points its `@saferoute/api-kit` dependency. */
const TARBALL = join(HERE, "saferoute-api-kit.tgz");
/** The app module and checks every app compiles as its own `shared/` folder. */
const SHARED = join(HERE, "shared");

/** Runs a command with inherited output; returns whether it exited 0. */
async function run(cmd: string, args: string[], cwd: string): Promise<boolean> {
  console.log(`$ (${cwd.replace(`${ROOT}/`, "")}) ${cmd} ${args.join(" ")}`);
  return await inherit(cmd, args, cwd) === 0;
}

/** Builds `npm/` and packs it to `TARBALL`. */
async function pack(): Promise<void> {
  if (!await run(Deno.execPath(), ["run", "-A", "scripts/build_npm.ts", "--skip-checks"], ROOT)) {
    throw new Error("npm build failed");
  }
  const destination = await Deno.makeTempDir({ prefix: "api-kit-pack-" });
  const output = await new Deno.Command("npm", {
    args: ["pack", "--json", "--ignore-scripts", "--pack-destination", destination],
    cwd: join(ROOT, "npm"),
    stderr: "inherit",
  }).output();
  if (!output.success) throw new Error("npm pack failed");
  const [info] = JSON.parse(new TextDecoder().decode(output.stdout)) as [{ filename: string }];
  copyFileSync(join(destination, info.filename), TARBALL);
  await Deno.remove(destination, { recursive: true });
  console.log(`packed ${info.filename} -> ${TARBALL.replace(`${ROOT}/`, "")}`);
}

/** Counts from a TAP report: `# pass N`, `# fail N`. */
function tapCounts(tap: string): { pass: number; fail: number } {
  const count = (name: string) => Number(tap.match(new RegExp(`^# ${name} (\\d+)$`, "m"))?.[1]);
  return { pass: count("pass"), fail: count("fail") };
}

/** Installs, compiles and tests one app; returns its pass/fail counts. */
async function testApp(app: string): Promise<{ pass: number; fail: number }> {
  const dir = join(HERE, app);
  console.log(`=== consumer ${app}`);
  // A fresh install of the tarball every time: npm would keep a stale copy.
  rmSync(join(dir, "node_modules", "@saferoute"), { recursive: true, force: true });
  rmSync(join(dir, "package-lock.json"), { force: true });
  rmSync(join(dir, "dist"), { recursive: true, force: true });
  rmSync(join(dir, "shared"), { recursive: true, force: true });
  cpSync(SHARED, join(dir, "shared"), { recursive: true });
  if (!await run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], dir)) {
    console.log(`${app}: npm install failed`);
    return { pass: 0, fail: 1 };
  }
  if (!await run("npm", ["run", "--silent", "build"], dir)) {
    rmSync(join(dir, "dist"), { recursive: true, force: true });
    console.log(`${app}: tsc failed`);
    return { pass: 0, fail: 1 };
  }
  const tap = join(dir, "dist", "report.tap");
  const ok = await run("node", [
    "--test",
    "--test-reporter=spec",
    "--test-reporter-destination=stdout",
    "--test-reporter=tap",
    `--test-reporter-destination=${tap}`,
    "dist/test/app.test.js",
  ], dir);
  const counts = existsSync(tap) ? tapCounts(Deno.readTextFileSync(tap)) : { pass: 0, fail: 0 };
  // Compiled output is not source: leave nothing for `deno fmt`/`deno lint` to trip on.
  rmSync(join(dir, "dist"), { recursive: true, force: true });
  if (Number.isNaN(counts.pass) || Number.isNaN(counts.fail)) return { pass: 0, fail: 1 };
  if (!ok && counts.fail === 0) counts.fail = 1;
  console.log(`${app}: ${counts.pass} passed, ${counts.fail} failed`);
  return counts;
}

/** Every app folder (one with a package.json) under this folder. */
function apps(): string[] {
  return readdirSync(HERE)
    .filter((name) => statSync(join(HERE, name)).isDirectory())
    .filter((name) => existsSync(join(HERE, name, "package.json")))
    .sort();
}

if (import.meta.main) {
  const selected = Deno.args.length > 0 ? Deno.args : apps();
  let pass = 0;
  let fail = 0;
  try {
    await pack();
    for (const app of selected) {
      const counts = await testApp(app);
      pass += counts.pass;
      fail += counts.fail;
    }
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    fail += 1;
  }
  console.log(`# pass ${pass}`);
  console.log(`# fail ${fail}`);
  Deno.exit(fail === 0 && pass > 0 ? 0 : 1);
}
