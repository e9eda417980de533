import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";

const denoJson = JSON.parse(readFileSync(new URL("../deno.json", import.meta.url), "utf8"));
const jsrJson = JSON.parse(readFileSync(new URL("../jsr.json", import.meta.url), "utf8"));

describe("package metadata", () => {
  it("deno.json and jsr.json agree on name, version, license and exports", () => {
    for (const field of ["name", "version", "license", "exports"]) {
      assert.deepEqual(jsrJson[field], denoJson[field], field);
    }
  });

  it("exports the twenty documented subpaths", () => {
    assert.deepEqual(Object.keys(denoJson.exports).sort(), [
      ".",
      "./api-keys",
      "./api-keys/admin",
      "./api-keys/audit",
      "./api-keys/fetch",
      "./api-keys/leaks",
      "./api-keys/nest",
      "./api-keys/nest/admin",
      "./api-keys/nest/leaks",
      "./api-keys/postgres",
      "./client",
      "./client/elements",
      "./rate-limits",
      "./rate-limits/postgres",
      "./rate-limits/redis",
      "./safe-response",
      "./safe-response/fetch",
      "./safe-response/nest",
      "./safe-response/openapi",
      "./telemetry",
    ]);
  });

  it("is a scoped package with a pre-1.0 semver version", () => {
    assert.match(denoJson.name, /^@[a-z0-9-]+\/[a-z0-9-]+$/);
    assert.match(denoJson.version, /^0\.\d+\.\d+$/);
  });

  it("maps every other npm dependency with an exact version (`name-x.y.z`: another tested version)", () => {
    for (const [alias, target] of Object.entries(denoJson.imports as Record<string, string>)) {
      if (target.includes("@^")) continue; // a peer JSR consumers bring: "the JSR package" below
      const version = alias.match(/-(\d+\.\d+\.\d+)$/)?.[1];
      const name = version === undefined ? alias : alias.slice(0, -version.length - 1);
      assert.match(
        target,
        new RegExp(
          `^npm:${name.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}@${
            version ?? "\\d+\\.\\d+\\.\\d+"
          }$`,
        ),
      );
    }
  });

  const MATRIX = new URL("./consumers/matrix.json", import.meta.url);
  it("declares every peer optional: a Fetch-only or core-only install pulls no Nest package", {
    // The Node run's test tree leaves tests/consumers out.
    skip: !existsSync(MATRIX) && "tests/consumers is not in this test tree",
  }, () => {
    const matrix = JSON.parse(readFileSync(MATRIX, "utf8"));
    for (const name of ["@nestjs/common", "@nestjs/core", "reflect-metadata", "rxjs"]) {
      assert.ok(name in matrix.peers, name);
    }
    for (const [name, peer] of Object.entries(matrix.peers as Record<string, unknown>)) {
      assert.deepEqual(peer, { optional: true }, name);
    }
  });
});

// The build scripts run on Deno only (they read deno.json with Deno APIs).
const onDeno = "Deno" in globalThis;
const config = "../scripts/npm_build/config.ts";

describe("npm package.json and README", { skip: !onDeno && "the build runs on Deno" }, () => {
  it("has repository, homepage and bugs fields, all on the repository", async () => {
    const module = "../scripts/npm_build/package_json.ts"; // computed: Deno only
    const { packageJson } = await import(module);
    const { REPOSITORY_URL } = await import(config);
    const pkg = packageJson(denoJson, [], []);
    assert.match(REPOSITORY_URL, /^https:\/\/github\.com\/[\w.-]+\/[\w.-]+$/);
    assert.deepEqual(pkg.repository, { type: "git", url: `git+${REPOSITORY_URL}.git` });
    assert.equal(pkg.homepage, `${REPOSITORY_URL}#readme`);
    assert.deepEqual(pkg.bugs, { url: `${REPOSITORY_URL}/issues` });
    assert.deepEqual(Object.keys(pkg.peerDependenciesMeta), Object.keys(pkg.peerDependencies));
  });

  it("the packed README links only absolutely, each into a file the repository has", async () => {
    const module = "../scripts/npm_build/package_json.ts";
    const { packedReadme } = await import(module);
    const { REPOSITORY_URL } = await import(config);
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
    const packed: string = packedReadme(readme);
    const targets = [...packed.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]);
    assert.ok(targets.length > 20, `${targets.length} links`);
    const base = `${REPOSITORY_URL}/blob/main/`;
    for (const target of targets) {
      if (target.startsWith("#")) continue;
      assert.match(target, /^https?:\/\//, `relative link in the packed README: ${target}`);
      if (!target.startsWith(base)) continue;
      const path = target.slice(base.length).split("#")[0];
      assert.ok(existsSync(new URL(`../${path}`, import.meta.url)), `${target}: no ${path}`);
    }
    assert.equal(
      packedReadme("[a](#x) [b](https://e.org/y) [c](./docs/c.md#z)"),
      `[a](#x) [b](https://e.org/y) [c](${base}docs/c.md#z)`,
    );
  });
});

/** Every file under the repository's `prisma/` (the schema and the numbered migrations), sorted. */
function prismaFiles(dir = "prisma"): string[] {
  return readdirSync(new URL(`../${dir}`, import.meta.url)).sort().flatMap((name) =>
    statSync(new URL(`../${dir}/${name}`, import.meta.url)).isDirectory()
      ? prismaFiles(`${dir}/${name}`)
      : [`${dir}/${name}`]
  );
}

/** The npm packages the published entry points' module graph imports (static or `import()`). */
async function publishedNpmImports(): Promise<string[]> {
  const root = new URL("../", import.meta.url);
  const dir = await Deno.makeTempDir({ prefix: "published-graph-" });
  try {
    const entry = `${dir}/entries.ts`;
    await Deno.writeTextFile(
      entry,
      Object.values(denoJson.exports as Record<string, string>)
        .map((path) => `import ${JSON.stringify(new URL(path, root).href)};\n`).join(""),
    );
    const { code, stdout } = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", `--config=${new URL("deno.json", root).pathname}`, entry],
      stdout: "piped",
      stderr: "null",
    }).output();
    assert.equal(code, 0, "deno info failed");
    const graph = JSON.parse(new TextDecoder().decode(stdout)) as {
      modules: { dependencies?: { specifier: string }[] }[];
    };
    const names = graph.modules.flatMap((module) => module.dependencies ?? [])
      .map(({ specifier }) => specifier)
      .filter((specifier) => !/^(\.|node:|file:)/.test(specifier))
      .map((specifier) =>
        specifier.split("/").slice(0, specifier.startsWith("@") ? 2 : 1).join("/")
      );
    return [...new Set(names)].sort();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

describe("the JSR package", { skip: !onDeno && "deno publish runs on Deno" }, () => {
  it("states each peer it imports as a range (the npm range's newest major), not a pin: an app's Nest 12.x is the one it uses", async () => {
    const module = "./consumers/matrix.ts"; // computed: tests/consumers is not in the Node tree
    const { JSR_PEERS, jsrPeerRange } = await import(module);
    const matrix = JSON.parse(
      readFileSync(new URL("./consumers/matrix.json", import.meta.url), "utf8"),
    );
    const imported = await publishedNpmImports();
    assert.deepEqual(imported.filter((name) => name in matrix.peers), JSR_PEERS);
    for (const name of JSR_PEERS) {
      const range: string = jsrPeerRange(matrix, name);
      assert.match(range, /^\^\d+\.\d+\.\d+$/, name);
      assert.equal(denoJson.imports[name], `npm:${name}@${range}`, name);
    }
    assert.equal(jsrPeerRange(matrix, "@nestjs/common"), "^12.0.1");
    // The repository's own runs still install one version each: the lock's, frozen.
    const lock = JSON.parse(readFileSync(new URL("../deno.lock", import.meta.url), "utf8"));
    assert.equal(denoJson.lock.frozen, true);
    for (const name of JSR_PEERS) assert.ok(lock.specifiers[denoJson.imports[name]], name);
  });

  it("holds prisma/ (the schema and every migration) and no tests, benches, scripts, demo or lock file", async () => {
    const { stderr } = await new Deno.Command(Deno.execPath(), {
      args: ["publish", "--dry-run", "--allow-dirty"],
      cwd: new URL("../", import.meta.url),
      env: { NO_COLOR: "1" },
      stdout: "null",
    }).output();
    const root = new URL("../", import.meta.url).href;
    const listed = [...new TextDecoder().decode(stderr).matchAll(/^\s+(file:\/\/\S+) \(/gm)]
      .map(([, url]) => url.slice(root.length));
    assert.ok(listed.includes("mod.ts"), listed.join("\n"));
    const migrations = prismaFiles().filter((file) => /^prisma\/migrations\/\d{4}_/.test(file));
    assert.ok(migrations.length >= 25, migrations.join(", "));
    for (const file of ["prisma/schema.prisma", ...migrations]) {
      assert.ok(listed.includes(file), `${file} is not published`);
    }
    const dev = listed.filter((file) =>
      /^(tests|bench|scripts|demo|npm|generated)\//.test(file) || file === "deno.lock"
    );
    assert.deepEqual(dev, []);
  });
});
