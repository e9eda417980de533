import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";

const root = new URL("../", import.meta.url);
const LIBRARY_DIRS = ["api_keys", "safe_response", "client", "rate_limits", "telemetry"];

/** Module specifiers a file imports or re-exports (static and dynamic); doc examples skipped. */
function importsOf(path: string): string[] {
  const source = readFileSync(new URL(path, root), "utf8").replace(/\/\*[\s\S]*?\*\//g, "");
  const pattern =
    /(?:import|export)\s[^"'`;]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']/g;
  return [...source.matchAll(pattern)].map((match) => match[1] ?? match[2]);
}

/** The `.ts` files of `dir` (`recursive`: of its sub-folders too), as root-relative paths. */
function sourceFiles(dir: string, recursive = false): string[] {
  let names: string[];
  try {
    names = readdirSync(new URL(dir, root));
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    const path = `${dir}${name}`;
    if (statSync(new URL(path, root)).isDirectory()) {
      return recursive ? sourceFiles(`${path}/`, true) : [];
    }
    return name.endsWith(".ts") ? [path] : [];
  });
}

/** Names a file exports by declaration or by name (`export { a, type B }`, `export function a`…). */
function exportedNames(path: string): string[] {
  const source = readFileSync(new URL(path, root), "utf8").replace(/\/\*[\s\S]*?\*\//g, "");
  const declared = [
    ...source.matchAll(
      /^export\s+(?:declare\s+)?(?:async\s+)?(?:function\*?|class|const|let|interface|type|enum)\s+([\w$]+)/gm,
    ),
  ].map((m) => m[1]);
  const listed = [...source.matchAll(/^export\s+(?:type\s+)?\{([^}]*)\}/gm)].flatMap((m) =>
    m[1].split(",").map((part) => part.trim().replace(/^type\s+/, "").split(/\s+as\s+/).pop()!)
      .filter((name) => name !== "")
  );
  return [...declared, ...listed];
}

/** Library files a file imports, as root-relative paths. */
function localImports(file: string): string[] {
  return importsOf(file).filter((s) => s.startsWith(".")).map((s) =>
    new URL(s, new URL(file, root)).href.slice(root.href.length)
  );
}

const LIBRARY_FILES = LIBRARY_DIRS.flatMap((dir) => sourceFiles(`${dir}/`, true));
const GRAPH = new Map(LIBRARY_FILES.map((file) => [file, localImports(file)]));

/** Every import cycle among `graph`'s files, each as the files on it (Tarjan's algorithm). */
function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (file: string) => {
    index.set(file, next);
    low.set(file, next++);
    stack.push(file);
    for (const target of graph.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (stack.includes(target)) {
        low.set(file, Math.min(low.get(file)!, index.get(target)!));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || graph.get(file)?.includes(file)) found.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found;
}

/** Asserts no file under `from` imports a file under any of `forbidden`. */
function assertNoImports(from: string, forbidden: string[]) {
  for (const [file, targets] of GRAPH) {
    if (!file.startsWith(from)) continue;
    for (const target of targets) {
      assert.ok(
        !forbidden.some((prefix) => target.startsWith(prefix)),
        `${file} imports ${target}`,
      );
    }
  }
}

/** The folders of the api-keys core (framework-free; the bindings are apart). */
const API_KEYS_CORE = [
  "api_keys/",
  "api_keys/metering/",
  "api_keys/verify/",
  "api_keys/storage/",
  "api_keys/leaks/",
  "api_keys/admin/",
];

const BINDINGS = [
  "api_keys/nest/",
  "api_keys/fetch/",
  "api_keys/postgres/",
  "safe_response/nest/",
  "safe_response/openapi/",
  "safe_response/fetch/",
  "rate_limits/postgres/",
  "rate_limits/redis/",
];

describe("architecture", () => {
  it("finds the library files", () => assert.ok(LIBRARY_FILES.length > 80));

  it("no import cycles among library files (type-only imports included)", () => {
    assert.deepEqual(cycles(GRAPH), []);
  });

  it("the cycle check finds a cycle", () => {
    assert.deepEqual(cycles(new Map([["a", ["b"]], ["b", ["c"]], ["c", ["a"]], ["d", ["a"]]])), [
      ["a", "b", "c"],
    ]);
  });

  it("cores never import a binding", () => {
    for (const core of LIBRARY_FILES.filter((file) => !BINDINGS.some((b) => file.startsWith(b)))) {
      for (const target of GRAPH.get(core)!) {
        assert.ok(!BINDINGS.some((binding) => target.startsWith(binding)), `${core} -> ${target}`);
      }
    }
  });

  it("safe_response/nest and safe_response/openapi never import each other", () => {
    assertNoImports("safe_response/nest/", ["safe_response/openapi/"]);
    assertNoImports("safe_response/openapi/", ["safe_response/nest/"]);
  });

  it("the leak intake never imports a binding; test_key.ts stays a leaf", () => {
    assertNoImports("api_keys/leaks/", BINDINGS);
    const importers = [...GRAPH].filter(([file, targets]) =>
      targets.includes("api_keys/test_key.ts") && file !== "api_keys/mod.ts"
    );
    assert.deepEqual(importers.map(([file]) => file), []);
  });

  it("a component's core imports no other component's binding or core internals", () => {
    assertNoImports("rate_limits/", ["api_keys/", "safe_response/"]);
  });

  it("api_keys/ imports rate_limits/ only through its entry points (rate_limits/mod.ts, postgres/mod.ts, redis/mod.ts) and two of mod.ts's light public files", () => {
    const entryPoints = [
      "rate_limits/mod.ts",
      "rate_limits/postgres/mod.ts",
      "rate_limits/redis/mod.ts",
      // Public files (their names all exported by mod.ts), for values `./api-keys/nest` needs at import:
      // the barrel would load the limiter, stores and throttler with it (issue 41).
      "rate_limits/policy.ts",
      "rate_limits/credits.ts",
    ];
    const internal = [...GRAPH].flatMap(([file, targets]) =>
      file.startsWith("api_keys/")
        ? targets.filter((t) => t.startsWith("rate_limits/") && !entryPoints.includes(t))
          .map((t) => `${file} -> ${t}`)
        : []
    );
    assert.deepEqual(internal, []);
  });

  it("rate_limits/ exports from its public-named files only what an entry point exports (internal helpers live in _ files)", () => {
    const publicNames = new Set(
      ["rate_limits/mod.ts", "rate_limits/postgres/mod.ts", "rate_limits/redis/mod.ts"].flatMap((
        entry,
      ) => exportedNames(entry)),
    );
    const extra = [
      ...sourceFiles("rate_limits/"),
      ...sourceFiles("rate_limits/postgres/"),
      ...sourceFiles("rate_limits/redis/"),
    ]
      .filter((file) => !file.split("/").pop()!.startsWith("_") && !file.endsWith("/mod.ts"))
      .flatMap((file) =>
        exportedNames(file).filter((name) => !publicNames.has(name)).map((name) =>
          `${file}: ${name}`
        )
      );
    assert.deepEqual(extra, []);
  });

  for (
    const core of [
      ...API_KEYS_CORE,
      "safe_response/",
      "api_keys/fetch/",
      "safe_response/fetch/",
    ]
  ) {
    it(`${core} imports nothing from Nest, rxjs, Node or the Nest bindings`, () => {
      for (const file of sourceFiles(core)) {
        for (const specifier of importsOf(file)) {
          assert.doesNotMatch(specifier, /^(@nestjs\/|rxjs|node:|reflect-metadata)|\/nest\//, file);
        }
      }
    });
  }

  it("only ./telemetry imports @opentelemetry/api (an optional peer); its taps, error names, detached calls, text rule, timer bound and unknown-field rule import nothing", () => {
    const importers = LIBRARY_FILES.filter((file) =>
      importsOf(file).some((s) => s.startsWith("@opentelemetry/"))
    );
    assert.deepEqual(importers, ["telemetry/mod.ts"]);
    assert.deepEqual(importsOf("telemetry/_taps.ts"), []);
    assert.deepEqual(importsOf("telemetry/_error_name.ts"), []);
    assert.deepEqual(importsOf("telemetry/_detached.ts"), []);
    assert.deepEqual(importsOf("telemetry/_text.ts"), []);
    assert.deepEqual(importsOf("telemetry/_timer.ts"), []);
    assert.deepEqual(importsOf("telemetry/_known_fields.ts"), []);
    assert.deepEqual(importsOf("telemetry/_fetch_target.ts"), []);
  });

  it("only ./safe-response/openapi imports @nestjs/swagger (an optional peer)", () => {
    const dirs = [
      ...API_KEYS_CORE,
      "api_keys/nest/",
      "safe_response/",
      "safe_response/nest/",
      "client/",
    ];
    for (const file of dirs.flatMap((dir) => sourceFiles(dir))) {
      assert.ok(!importsOf(file).some((s) => s.startsWith("@nestjs/swagger")), file);
    }
    const openapi = sourceFiles("safe_response/openapi/").filter((file) =>
      importsOf(file).includes("@nestjs/swagger")
    );
    assert.ok(openapi.length > 0);
  });

  it("the Fetch bindings import no npm package, and ./api-keys/fetch nothing of safe-response (of telemetry, its detached calls, unknown-field rule and request target only)", () => {
    for (const file of sourceFiles("api_keys/fetch/")) {
      for (const specifier of importsOf(file)) {
        assert.match(
          specifier,
          /^(\.\.?\/((leaks|admin|metering)\/)?[\w.]+|\.\.\/\.\.\/telemetry\/_(detached|known_fields|fetch_target))\.ts$/,
          file,
        );
      }
    }
    for (const file of sourceFiles("safe_response/fetch/")) {
      for (const specifier of importsOf(file)) {
        assert.match(specifier, /^\.\.?\/[\w./]+\.ts$/, file);
      }
    }
  });

  it("client/ imports nothing outside itself (client/elements/ may import client/)", () => {
    for (const file of sourceFiles("client/", true)) {
      const pattern = file.startsWith("client/elements/")
        ? /^\.{1,2}\/[\w.-]+\.ts$/
        : /^\.\/[\w.-]+\.ts$/;
      for (const specifier of importsOf(file)) assert.match(specifier, pattern, file);
    }
    assert.ok(sourceFiles("client/elements/").length >= 4);
  });

  it("the api-keys core imports only @noble/hashes (the hashers, the counter subjects) from npm", () => {
    const core = API_KEYS_CORE.flatMap((d) => sourceFiles(d));
    const external = core.flatMap(importsOf).filter((s) => !s.startsWith("."));
    assert.deepEqual([...new Set(external.map((s) => s.split("/")[0]))].sort(), ["@noble"]);
    const noble = core.filter((file) =>
      importsOf(file).some((s) => s.startsWith("@noble/hashes/"))
    );
    // Statically only the synchronous Sha256Hasher; hasher.ts loads SHA-256 on first need (issue 41).
    assert.deepEqual(noble, ["api_keys/hasher.ts", "api_keys/sha256_hasher.ts"]);
  });

  it("the rate-limits core imports only its own files (and the telemetry leaves: taps, error names, detached calls, the text rule, the timer bound, the unknown-field rule), and its stores only the core (and the timer bound)", () => {
    for (const file of sourceFiles("rate_limits/")) {
      for (const specifier of importsOf(file)) {
        assert.match(
          specifier,
          /^(\.\/[\w.]+|\.\.\/telemetry\/_(taps|error_name|detached|text|timer|known_fields))\.ts$/,
          file,
        );
      }
    }
    for (const dir of ["rate_limits/postgres/", "rate_limits/redis/"]) {
      for (const file of sourceFiles(dir)) {
        for (const specifier of importsOf(file)) {
          // The core's contract, plus what remote stores share: the clock offset, error reports
          // and the split by kind, the window rule's sub-bucket count, the refill parameters, the
          // mark of answers the limiter hands on, the hex digest (a Redis script's SHA-1), the
          // options rule (unknown options and non-boolean flags refused) and the subject rule (a
          // Redis prefix holds no brace), and the longest delay a timer arms.
          assert.match(
            specifier,
            /^(\.\/[\w.]+|\.\.\/(store|policy|credits|_clock|_remote|_window|_refill|_well_formed|_hex_digest|_options|_checks)|\.\.\/\.\.\/telemetry\/_timer)\.ts$/,
            file,
          );
        }
      }
    }
  });
});
