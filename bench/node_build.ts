/**
 * Bundles the benchmark scripts for Node against the npm build: every import
 * of a library source file (`api_keys/`, `safe_response/`, `client/`) is
 * redirected to its compiled twin under `npm/esm/`, every package stays
 * external (resolved from the repository's `node_modules/`). Output:
 * `node_modules/.saferoute-bench/` (ignored by git, fmt and lint).
 *
 * Run: `deno run -A bench/node_build.ts` (`bench/run.ts` does it).
 *
 * @module
 */
import * as esbuild from "esbuild";
import { cpSync, mkdirSync, rmSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { npmBuild } from "../scripts/npm_build/fresh.ts";

/** Repository root. */
export const ROOT: string = fileURLToPath(new URL("../", import.meta.url));
/** Where the Node bundles go. */
export const NODE_OUT: string = join(ROOT, "node_modules/.saferoute-bench");
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

/** Bundles {@link ENTRIES} into {@link NODE_OUT} over the npm build in `npmDir` (`npmBuild()`). */
export async function buildNodeBench(npmDir: string): Promise<void> {
  const npmEsm = join(npmDir, "esm");
  rmSync(NODE_OUT, { recursive: true, force: true });
  mkdirSync(NODE_OUT, { recursive: true });
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
      outdir: NODE_OUT,
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
  cpSync(join(ROOT, "bench/http/i18n"), join(NODE_OUT, "i18n"), { recursive: true });
}

if (import.meta.main) {
  await buildNodeBench(await npmBuild());
  console.log(`bundled ${Object.keys(ENTRIES).length} scripts into ${NODE_OUT}`);
}
