/**
 * Bundles the benchmark scripts for Node against the npm build: every import
 * of a library source file (`api_keys/`, `safe_response/`, `client/`) is
 * redirected to its compiled twin under `npm/esm/`, every package stays
 * external (resolved from the repository's `node_modules/`). Output: a
 * directory of the run's own, `node_modules/.saferoute-bench-XXXXXX/` (inside
 * `node_modules/` so that the packages resolve; ignored by git, fmt and lint):
 * two runs at once never share one. `bench/run.ts` removes its own at the end.
 *
 * Run: `deno run -A bench/node_build.ts` (`bench/run.ts` does it).
 *
 * @module
 */
import * as esbuild from "esbuild";
import { cpSync, mkdtempSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { npmBuild } from "../scripts/npm_build/fresh.ts";

/** Repository root. */
export const ROOT: string = fileURLToPath(new URL("../", import.meta.url));
/** The benchmark scripts, bundled as `<name>.mjs`. */
export const ENTRIES: Record<string, string> = {
  core: "bench/core.ts",
  in_process: "bench/in_process.ts",
  http: "bench/http.ts",
  memory: "bench/memory.ts",
  expiry: "bench/expiry.ts",
  leaks: "bench/leaks.ts",
  unknown_prefix: "bench/unknown_prefix.ts",
  server: "bench/http/server.ts",
};

const LIBRARY = /^(api_keys|safe_response|client)\//;

/**
 * Bundles {@link ENTRIES} over the npm build in `npmDir` (`npmBuild()`) into a new directory of
 * this run's own under `node_modules/`: its path (the caller removes it).
 */
export async function buildNodeBench(npmDir: string): Promise<string> {
  const npmEsm = join(npmDir, "esm");
  const out = mkdtempSync(join(ROOT, "node_modules/.saferoute-bench-"));
  const redirect: esbuild.Plugin = {
    name: "library-to-npm",
    setup(build) {
      build.onResolve({ filter: /.*/ }, (args) => {
        if (args.kind === "entry-point") return undefined;
        if (!args.path.startsWith(".")) return { path: args.path, external: true };
        const absolute = resolve(dirname(args.importer), args.path);
        const rel = relative(ROOT, absolute).replaceAll("\\", "/");
        if (LIBRARY.test(rel)) {
          return { path: join(npmEsm, rel.replace(/\.ts$/, ".js")), external: true };
        }
        return undefined;
      });
    },
  };
  try {
    await esbuild.build({
      entryPoints: Object.entries(ENTRIES).map(([out, source]) => ({
        out,
        in: join(ROOT, source),
      })),
      outdir: out,
      outExtension: { ".js": ".mjs" },
      bundle: true,
      format: "esm",
      platform: "node",
      target: "node20",
      logLevel: "warning",
      plugins: [redirect],
      tsconfigRaw: { compilerOptions: { experimentalDecorators: true } },
    });
  } finally {
    await esbuild.stop();
  }
  cpSync(join(ROOT, "bench/http/i18n"), join(out, "i18n"), { recursive: true });
  return out;
}

if (import.meta.main) {
  const out = await buildNodeBench(await npmBuild());
  console.log(`bundled ${Object.keys(ENTRIES).length} scripts into ${out} (remove it when done)`);
}
