/**
 * The npm build Node test processes and benches run on, never rebuilt in
 * place: `npm/` when it is newer than every library source (.ci/run's `node`
 * stage builds it once for the later stages), else a build of this process's
 * own in a temporary folder of the repository (`.npm-build-*`: Node resolves
 * its packages from the repository's `node_modules`), made once per process
 * and removed at its exit, so two runs never clobber each other's files.
 *
 * @module
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { OUT_DIR, readDenoJson, ROOT } from "./config.ts";

/** Newest modification time (ms) of `path`'s `.ts` files (or of the file itself). */
function newest(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = 0;
  for (const name of readdirSync(path)) {
    const child = join(path, name);
    if (statSync(child).isDirectory() || name.endsWith(".ts")) {
      latest = Math.max(latest, newest(child));
    }
  }
  return latest;
}

/**
 * The library sources the build compiles: the top-level folder (or file) of
 * each `deno.json` export.
 */
export function librarySources(): string[] {
  const tops = Object.values(readDenoJson().exports).map((file) =>
    file.replace(/^\.\//, "").split("/")[0]
  );
  return [...new Set(tops)].sort().map((top) => join(ROOT, top));
}

/** Whether the build in `outDir` is newer than every library source. */
export function isFresh(outDir: string = OUT_DIR): boolean {
  const marker = join(outDir, "esm", "mod.js");
  return existsSync(marker) &&
    statSync(marker).mtimeMs >= Math.max(...librarySources().map(newest));
}

let own: Promise<string> | undefined;

/** The folder of a fresh npm build: `npm/` when fresh, else this process's own (built once). */
export function npmBuild(): Promise<string> {
  if (isFresh()) return Promise.resolve(OUT_DIR);
  return own ??= (async () => {
    const dir = await Deno.makeTempDir({ dir: ROOT, prefix: ".npm-build-" });
    console.log(`# npm/ is missing or older than the sources: building into ${dir}`);
    const { success } = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "scripts/build_npm.ts", "--skip-checks"],
      cwd: ROOT,
      env: { API_KIT_NPM_OUT: dir },
      stdout: "null",
      stderr: "inherit",
    }).output();
    if (!success) throw new Error("the npm build failed");
    globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));
    return dir;
  })();
}
