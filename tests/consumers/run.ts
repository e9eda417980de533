/**
 * The consumer matrix: builds and packs the npm package, then for every app of the compatibility
 * matrix (`matrix.json`, apps under `apps/`) in a fresh temporary folder:
 *
 * 1. `npm ci` from the app's committed lockfile (its third-party dependencies only);
 * 2. `npm install --no-save --no-package-lock <tarball>`: the package under test is never locked,
 *    so a clean cache cannot fail on its integrity and a warm one cannot serve a stale copy;
 * 3. compiles the app (`src/`, `test/` and the matrix's suite as `shared/`, without its
 *    `swaggerOnly` files when the app has no `@nestjs/swagger`) with its own module system
 *    (CommonJS or `nodenext` ESM) and `tsc`;
 * 4. runs it with `node --test`: the install checks (the installed build id is the one just
 *    packed; Node's and the platform server's majors are the matrix's), then the suite's real
 *    HTTP requests;
 * 5. in the ESM apps on Express, starts each program of the docs marked `<!-- node -->`
 *    (compiled in step 3 as `src/docs/`) on a free `PORT` until it answers HTTP. With
 *    `API_KIT_DOCS_APP` set (a path), the last of these apps is moved there instead of removed:
 *    the browser suite drives docs/settings-page.md's Nest app in it (`.ci/run` shares it so).
 *
 * First the apps without Nest (`plain/`: a Fetch app and a plain Node app, no dependency but the
 * tarball), which check that `npm ls` lists no Nest peer, that a missing optional peer is an
 * error naming it (and its install command in CommonJS), and that the install holds the repository's `prisma/`.
 *
 * Runs `CONSUMER_JOBS` apps at a time (default 2), each app's output printed whole when it ends.
 * Prints each app's time and the matrix's total, then one `# pass N` / `# fail N` summary;
 * exits non-zero when anything failed. Apps marked `pending` are listed and skipped unless named
 * or `--include-pending` is given.
 *
 * ```sh
 * deno task test:consumers [--include-pending] [app-id ...]
 * ```
 *
 * @module
 */
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { capture, inherit } from "../../scripts/npm_build/run.ts";
import {
  allBlocks,
  type CodeBlock,
  compiledDocProgram,
  fileNameOf,
  programOf,
  servesHttp,
} from "../doc_blocks.ts";
import { appId, type ConsumerApp, type Matrix } from "./matrix.ts";
import { APPS_DIR, readMatrix } from "./update.ts";

const ROOT = join(import.meta.dirname!, "..", "..");
/** The apps without Nest: one folder each, beside the checks they share (`shared.mjs`). */
const PLAIN_DIR = join(import.meta.dirname!, "plain");
/** Ids of the apps without Nest (`plain-<folder>`). */
const PLAIN_APPS = readdirSync(PLAIN_DIR)
  .filter((name) => statSync(join(PLAIN_DIR, name)).isDirectory())
  .sort()
  .map((name) => `plain-${name}`);
/** What every app compiles beside the suite: its entry (`src/`) and its test entry (`test/`). */
const ENTRY_DIRS = ["src", "test"];

/**
 * How many apps run at once (`CONSUMER_JOBS`, default 2: one installs or waits on the network
 * while the other compiles or tests). Each app's output is printed whole when it ends.
 */
const JOBS = Math.max(1, Number(Deno.env.get("CONSUMER_JOBS") ?? "2") || 1);

/** The quiet flags of every `npm` install. */
const QUIET = ["--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"];

/** One app's transcript: printed whole when the app ends, so parallel apps never interleave. */
type Log = string[];

/** Runs a command with its output added to `log`; returns whether it exited 0. */
async function run(
  log: Log,
  cmd: string,
  args: string[],
  cwd: string,
  env?: Record<string, string>,
): Promise<boolean> {
  log.push(`$ ${cmd} ${args.join(" ")}`);
  const { code, stdout, stderr } = await capture(cmd, args, cwd, env);
  log.push(stdout.trimEnd(), stderr.trimEnd());
  return code === 0;
}

/** Builds `npm/` and packs it into `dir`; returns the tarball's path and the build's id. */
async function pack(dir: string): Promise<{ tarball: string; buildId: string }> {
  const build = ["run", "-A", "scripts/build_npm.ts", "--skip-checks"];
  console.log(`$ ${Deno.execPath()} ${build.join(" ")}`);
  if (await inherit(Deno.execPath(), build, ROOT) !== 0) {
    throw new Error("npm build failed");
  }
  const output = await new Deno.Command("npm", {
    args: ["pack", "--json", "--ignore-scripts", "--pack-destination", dir],
    cwd: join(ROOT, "npm"),
    stderr: "inherit",
  }).output();
  if (!output.success) throw new Error("npm pack failed");
  const [info] = JSON.parse(new TextDecoder().decode(output.stdout)) as [{ filename: string }];
  const pkg = JSON.parse(readFileSync(join(ROOT, "npm", "package.json"), "utf8"));
  if (typeof pkg.buildId !== "string") throw new Error("npm/package.json has no buildId");
  console.log(`packed ${info.filename} (build id ${pkg.buildId})`);
  return { tarball: join(dir, info.filename), buildId: pkg.buildId };
}

/** Runs `node --test` on `file` in `cwd` with a TAP report; returns its counts (a failure at least 1). */
async function nodeTest(
  log: Log,
  file: string,
  cwd: string,
  env?: Record<string, string>,
): Promise<{ pass: number; fail: number; ok: boolean } | undefined> {
  const tap = join(cwd, "report.tap");
  const ok = await run(
    log,
    "node",
    [
      "--test",
      "--test-reporter=spec",
      "--test-reporter-destination=stdout",
      "--test-reporter=tap",
      `--test-reporter-destination=${tap}`,
      file,
    ],
    cwd,
    env,
  );
  const counts = existsSync(tap) ? tapCounts(readFileSync(tap, "utf8")) : { pass: 0, fail: 0 };
  if (Number.isNaN(counts.pass) || Number.isNaN(counts.fail)) return undefined;
  if (!ok && counts.fail === 0) counts.fail = 1;
  return { ...counts, ok };
}

/** Counts from a TAP report: `# pass N`, `# fail N`. */
function tapCounts(tap: string): { pass: number; fail: number } {
  const count = (name: string) => Number(tap.match(new RegExp(`^# ${name} (\\d+)$`, "m"))?.[1]);
  return { pass: count("pass"), fail: count("fail") };
}

/** The `tsconfig.json` of an app in `module` format. */
function tsconfig(module: ConsumerApp["module"]): string {
  const esm = module === "esm";
  return `${
    JSON.stringify(
      {
        compilerOptions: {
          target: "ES2022",
          module: esm ? "nodenext" : "commonjs",
          moduleResolution: esm ? "nodenext" : "node10",
          ignoreDeprecations: "6.0",
          esModuleInterop: true,
          experimentalDecorators: true,
          emitDecoratorMetadata: true,
          rewriteRelativeImportExtensions: true,
          strict: true,
          skipLibCheck: true,
          types: ["node"],
          rootDir: ".",
          outDir: "dist",
        },
        include: [...ENTRY_DIRS, "shared"],
      },
      null,
      2,
    )
  }\n`;
}

/** The programs of the docs that run on Node as printed (`<!-- node -->`), and the named blocks. */
const { blocks: DOC_BLOCKS, examples: DOC_EXAMPLES } = allBlocks();
const DOC_PROGRAMS: CodeBlock[] = DOC_BLOCKS.filter((block) => block.node);

/** Starts a doc program compiled in `dir` on a free port; whether it answered HTTP (logged). */
async function serves(log: Log, block: CodeBlock, dir: string): Promise<boolean> {
  const { status, output } = await servesHttp("node", [compiledDocProgram(block)], dir, {});
  const ok = status !== undefined;
  log.push(`${ok ? "ok" : "not ok"}: ${block.page}:${block.line} serves on Node (${status})`);
  if (!ok) log.push(output);
  return ok;
}

/** One app's outcome. */
interface Outcome {
  id: string;
  pass: number;
  fail: number;
  seconds: number;
  note: string;
  /** The app's folder, left for `API_KIT_DOCS_APP` (it compiled the docs' programs). */
  kept?: string;
}

/**
 * Runs one app's `body` with a transcript of its own, printed whole with the outcome when it
 * ends; a throw is the app's failure, not the matrix's.
 */
async function inApp(
  id: string,
  title: string,
  body: (log: Log) => Promise<Omit<Outcome, "id" | "seconds">>,
): Promise<Outcome> {
  const started = performance.now();
  const log: Log = [`=== consumer ${title}`];
  const result = await body(log).catch((error) => ({
    pass: 0,
    fail: 1,
    note: error instanceof Error ? error.message : String(error),
  }));
  const seconds = (performance.now() - started) / 1000;
  log.push(
    `${id}: ${result.pass} passed, ${result.fail} failed (${result.note}, ${seconds.toFixed(1)} s)`,
  );
  console.log(log.filter((line) => line !== "").join("\n"));
  return { id, ...result, seconds };
}

/** Whether an app compiles and serves the docs' Node programs (the ESM apps on Express). */
function servesDocs(matrix: Matrix, app: ConsumerApp): boolean {
  return app.module === "esm" &&
    matrix.platforms[app.platform].adapter === "@nestjs/platform-express";
}

/**
 * Installs, compiles and tests one app in a fresh folder; returns its outcome. With `keep`, the
 * folder of an app that compiled the docs' programs is left (`kept`) instead of removed.
 */
async function testApp(
  matrix: Matrix,
  app: ConsumerApp,
  packed: { tarball: string; buildId: string },
  keep: boolean,
): Promise<Outcome> {
  const id = appId(matrix, app);
  const title = `${id}${app.pending ? ` (pending: ${app.pending})` : ""}`;
  let kept: string | undefined;
  const outcome = await inApp(id, title, async (log) => {
    const dir = await Deno.makeTempDir({ prefix: `consumer-${id}-` });
    const docs = servesDocs(matrix, app) ? DOC_PROGRAMS : [];
    try {
      for (const file of ["package.json", "package-lock.json"]) {
        copyFileSync(join(APPS_DIR, id, file), join(dir, file));
      }
      for (const entry of ENTRY_DIRS) {
        cpSync(join(import.meta.dirname!, entry), join(dir, entry), { recursive: true });
      }
      const suite = join(ROOT, matrix.suite.dir);
      const swaggerOnly = new Set(matrix.suite.swaggerOnly.map((file) => join(suite, file)));
      cpSync(suite, join(dir, "shared"), {
        recursive: true,
        filter: (source) => app.swagger || !swaggerOnly.has(source),
      });
      writeFileSync(join(dir, "tsconfig.json"), tsconfig(app.module));
      if (docs.length > 0) mkdirSync(join(dir, "src", "docs"));
      for (const block of docs) {
        writeFileSync(
          join(dir, "src", "docs", fileNameOf(block)),
          programOf(block, DOC_EXAMPLES).code,
        );
      }

      if (!await run(log, "npm", ["ci", ...QUIET], dir)) {
        return { pass: 0, fail: 1, note: "npm ci failed" };
      }
      const install = ["install", "--no-save", "--no-package-lock", ...QUIET, packed.tarball];
      if (!await run(log, "npm", install, dir)) {
        return { pass: 0, fail: 1, note: "installing the tarball failed" };
      }
      const tsc = join("node_modules", "typescript", "bin", "tsc");
      if (!await run(log, "node", [tsc, "-p", "tsconfig.json"], dir)) {
        return { pass: 0, fail: 1, note: "tsc failed" };
      }

      const platform = matrix.platforms[app.platform];
      const set = matrix.sets[app.set];
      const counts = await nodeTest(log, "dist/test/app.test.js", dir, {
        API_KIT_BUILD_ID: packed.buildId,
        CONSUMER_APP: id,
        CONSUMER_NODE: matrix.node,
        CONSUMER_ADAPTER: platform.adapter,
        CONSUMER_ADAPTER_CLASS: platform.adapterClass,
        CONSUMER_SERVER: platform.server,
        CONSUMER_SERVER_MAJOR: String(platform.majors[String(set.nest)]),
        CONSUMER_SWAGGER: app.swagger ? "1" : "0",
      });
      if (counts === undefined) return { pass: 0, fail: 1, note: "no report" };
      let served = true;
      for (const block of docs) {
        if (await serves(log, block, dir)) counts.pass += 1;
        else [counts.fail, served] = [counts.fail + 1, false];
      }
      return { ...counts, note: counts.ok && served ? "ok" : "tests failed" };
    } finally {
      if (keep && existsSync(join(dir, "dist", "src", "docs"))) kept = dir;
      else await Deno.remove(dir, { recursive: true });
    }
  });
  return { ...outcome, kept };
}

/** Installs the tarball alone into a copy of a `plain/` app and runs its `app.test.mjs`. */
function testPlainApp(id: string, tarball: string): Promise<Outcome> {
  return inApp(id, id, async (log) => {
    const root = await Deno.makeTempDir({ prefix: `consumer-${id}-` });
    try {
      const dir = join(root, "app");
      mkdirSync(dir);
      cpSync(join(PLAIN_DIR, id.slice("plain-".length)), dir, { recursive: true });
      copyFileSync(join(PLAIN_DIR, "shared.mjs"), join(root, "shared.mjs"));
      const install = ["install", "--no-package-lock", ...QUIET, tarball];
      if (!await run(log, "npm", install, dir)) {
        return { pass: 0, fail: 1, note: "installing the tarball failed" };
      }
      const counts = await nodeTest(log, "app.test.mjs", dir, {
        API_KIT_PRISMA: join(ROOT, "prisma"),
      });
      if (counts === undefined) return { pass: 0, fail: 1, note: "no report" };
      return { ...counts, note: counts.ok ? "ok" : "tests failed" };
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  });
}

/** Runs `work` on each item, `jobs` at a time; the results in the items' order. */
async function eachAtOnce<T, R>(
  items: readonly T[],
  jobs: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = [];
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, items.length) }, worker));
  return results;
}

if (import.meta.main) {
  const started = performance.now();
  const matrix = readMatrix();
  const includePending = Deno.args.includes("--include-pending");
  const named = new Set(Deno.args.filter((arg) => !arg.startsWith("--")));
  const known = new Set([...PLAIN_APPS, ...matrix.apps.map((app) => appId(matrix, app))]);
  const unknown = [...named].filter((id) => !known.has(id));
  if (unknown.length > 0) {
    console.error(`unknown apps: ${unknown.join(", ")} (known: ${[...known].join(", ")})`);
    Deno.exit(1);
  }
  const selected = matrix.apps.filter((app) =>
    named.size > 0 ? named.has(appId(matrix, app)) : includePending || app.pending === undefined
  );
  const plain = PLAIN_APPS.filter((id) => named.size === 0 || named.has(id));
  const outcomes: Outcome[] = [];
  let fail = 0;
  const work = await Deno.makeTempDir({ prefix: "api-kit-pack-" });
  try {
    const packed = await pack(work);
    const keep = Deno.env.get("API_KIT_DOCS_APP");
    outcomes.push(
      ...await eachAtOnce(plain, JOBS, (id) => testPlainApp(id, packed.tarball)),
      ...await eachAtOnce(
        selected,
        JOBS,
        (app) => testApp(matrix, app, packed, keep !== undefined),
      ),
    );
    // API_KIT_DOCS_APP: the last app (in the matrix's order) that compiled the docs' programs.
    const kept = outcomes.flatMap((outcome) => outcome.kept ?? []);
    const last = kept.pop();
    if (keep !== undefined && last !== undefined) {
      await Deno.remove(keep, { recursive: true }).catch(() => {});
      await Deno.rename(last, keep);
      console.log(`${last}: kept in ${keep} (API_KIT_DOCS_APP)`);
    }
    for (const dir of kept) await Deno.remove(dir, { recursive: true });
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    fail += 1;
  } finally {
    await Deno.remove(work, { recursive: true });
  }
  console.log("=== consumer matrix");
  for (const outcome of outcomes) {
    console.log(
      `${outcome.id.padEnd(40)} ${String(outcome.pass).padStart(3)} passed ${
        String(outcome.fail).padStart(2)
      } failed ${outcome.seconds.toFixed(1).padStart(6)} s  ${outcome.note}`,
    );
  }
  for (const app of matrix.apps) {
    if (!selected.includes(app)) console.log(`${appId(matrix, app).padEnd(40)} skipped`);
  }
  const pass = outcomes.reduce((sum, outcome) => sum + outcome.pass, 0);
  fail += outcomes.reduce((sum, outcome) => sum + outcome.fail, 0);
  console.log(`consumer matrix time: ${((performance.now() - started) / 1000).toFixed(1)} s`);
  console.log(`# pass ${pass}`);
  console.log(`# fail ${fail}`);
  Deno.exit(fail === 0 && pass > 0 ? 0 : 1);
}
