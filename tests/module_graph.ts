/**
 * The module graph an import of a library entry point runs, read with
 * `deno info --json` (Deno only): the tests that pin what an entry loads at
 * import (tests/api_keys/nest/mod_test.ts, tests/api_keys/admin/mod_test.ts,
 * tests/api_keys/storage/in_memory_test.ts).
 *
 * @module
 */
import assert from "node:assert/strict";

/** The `it` options of a test that reads the module graph: skipped off Deno (the node stage). */
export const WITH_DENO_INFO = {
  skip: !("Deno" in globalThis) && "it reads the module graph with deno info",
};

interface GraphDependency {
  code?: { specifier?: string };
  isDynamic?: boolean;
}

/**
 * The local files an import of `entry` (a URL) runs, root-relative from the library folder
 * (`api_keys/...`, `rate_limits/...`, `client/...`): static value imports only (types and `import()` load
 * nothing); and the npm packages those files import statically.
 */
export async function loadedAtImport(
  entry: string,
): Promise<{ files: string[]; packages: string[] }> {
  const { code, stdout } = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", entry],
    stdout: "piped",
    stderr: "null",
  }).output();
  assert.equal(code, 0, "deno info failed");
  const graph = JSON.parse(new TextDecoder().decode(stdout)) as {
    roots: string[];
    modules: { specifier: string; dependencies?: GraphDependency[] }[];
  };
  const modules = new Map(graph.modules.map((module) => [module.specifier, module]));
  const seen = new Set<string>();
  const packages = new Set<string>();
  const pending = [...graph.roots];
  while (pending.length > 0) {
    const specifier = pending.pop()!;
    if (seen.has(specifier)) continue;
    seen.add(specifier);
    for (const dependency of modules.get(specifier)?.dependencies ?? []) {
      const target = dependency.code?.specifier;
      if (target === undefined || dependency.isDynamic) continue;
      if (target.startsWith("file:")) pending.push(target);
      else packages.add(target.replace(/^npm:\/?/, "").replace(/(?<=.)@[^/]*/, ""));
    }
  }
  return {
    files: [...seen].map((specifier) =>
      specifier.replace(/^.*?\/(api_keys|rate_limits|telemetry|client)\//, "$1/")
    ),
    packages: [...packages].sort(),
  };
}
