/**
 * `npm start` installs the demo's own light graph (demo/start.json, demo/start.lock), not the
 * development lock: this measures that graph (its npm packages for this platform, and their bytes
 * on disk in the Deno cache) and fails above the bound of a first start.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  bundleClient,
  bundleElements,
  bundleHeader,
  clientDigest,
} from "../../demo/page_assets.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const read = (path: string) => JSON.parse(readFileSync(join(ROOT, path), "utf8"));

/** At most this many npm packages in the demo's graph. */
const MAX_PACKAGES = 112;
/**
 * At most this many bytes on disk for them: a first start's bound is 100 MB (aim: 90 MB) with the
 * Deno cache's own files (transpiled modules, analysis caches: about 8 MB) and node_modules'
 * folders and links (about 4 MB).
 */
const MAX_BYTES = 76_000_000;

interface LockPackage {
  dependencies?: string[];
  optionalDependencies?: string[];
  os?: string[];
  cpu?: string[];
}

interface Lock {
  specifiers: Record<string, string>;
  npm: Record<string, LockPackage>;
  workspace: { links?: Record<string, unknown> };
}

/**
 * The lock's packages reachable from its top-level specifiers, on this OS and CPU, without the
 * linked stand-ins (demo/stand_ins/: files of the checkout, nothing downloaded).
 */
function graphPackages(lock: Lock) {
  const linked = new Set(
    Object.keys(lock.workspace.links ?? {}).map((spec) => spec.slice("npm:".length)),
  );
  const os = Deno.build.os;
  const cpu = Deno.build.arch === "x86_64" ? "x64" : Deno.build.arch === "aarch64" ? "arm64" : "";
  const keyOf = (name: string, version: string) => `${name}@${version}`;
  const byName = (spec: string) =>
    Object.keys(lock.npm).find((key) =>
      key === spec || key.startsWith(`${spec}@`) || key.startsWith(`${spec}_`)
    );
  const seen = new Set<string>();
  const queue = Object.entries(lock.specifiers).map(([spec, version]) =>
    keyOf(spec.slice("npm:".length).replace(/@[^@]+$/, ""), version)
  );
  while (queue.length > 0) {
    const key = queue.pop()!;
    const entry = lock.npm[key];
    if (entry === undefined || seen.has(key) || linked.has(key)) continue;
    if (entry.os && !entry.os.includes(os)) continue;
    if (entry.cpu && !entry.cpu.includes(cpu)) continue;
    seen.add(key);
    for (const dependency of [...entry.dependencies ?? [], ...entry.optionalDependencies ?? []]) {
      const resolved = lock.npm[dependency] ? dependency : byName(dependency);
      if (resolved !== undefined) queue.push(resolved);
    }
  }
  return [...seen].sort();
}

/** Bytes on disk (allocated blocks) of every file under `path`. */
function diskBytes(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return (stat.blocks ?? Math.ceil(stat.size / 4096) * 8) * 512;
  return readdirSync(path).reduce((sum, name) => sum + diskBytes(join(path, name)), 0);
}

describe("npm start's light install", () => {
  it("pins the demo's packages as deno.json does, and package.json starts it", () => {
    const root = read("deno.json").imports as Record<string, string>;
    const demo = read("demo/start.json").imports as Record<string, string>;
    for (const [name, target] of Object.entries(demo)) assert.equal(target, root[name], name);
    assert.equal(read("package.json").scripts.start, "exec node scripts/start_demo.mjs");
  });

  it(`the demo's graph: at most ${MAX_PACKAGES} packages and ${MAX_BYTES / 1e6} MB on disk`, async () => {
    const packages = graphPackages(read("demo/start.lock"));
    const info = JSON.parse(
      new TextDecoder().decode(
        (await new Deno.Command(Deno.execPath(), { args: ["info", "--json"] }).output()).stdout,
      ),
    ) as { npmCache: string };
    let bytes = 0;
    const absent: string[] = [];
    for (const key of packages) {
      const base = key.split("_")[0];
      const at = base.lastIndexOf("@");
      const dir = join(info.npmCache, "registry.npmjs.org", base.slice(0, at), base.slice(at + 1));
      if (existsSync(dir)) bytes += diskBytes(dir);
      else absent.push(base);
    }
    console.log(`demo graph: ${packages.length} packages, ${(bytes / 1e6).toFixed(1)} MB on disk`);
    assert.deepEqual(absent, [], "packages not in the Deno cache (run `deno install` first)");
    assert.ok(packages.length <= MAX_PACKAGES, `${packages.length} packages`);
    assert.ok(bytes <= MAX_BYTES, `${(bytes / 1e6).toFixed(1)} MB`);
  });

  it("DATABASE_URL on it names the development install (the light install has no Prisma)", async () => {
    const { code, stderr } = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--config", "demo/start.json", "demo/main.ts", "--port", "0"],
      cwd: ROOT,
      env: {
        DATABASE_URL: "postgresql://demo:demo@127.0.0.1:1/demo",
        API_KEY_PEPPERS: JSON.stringify({ 1: "x".repeat(40) }),
        NO_COLOR: "1",
      },
      stdout: "null",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(stderr);
    assert.equal(code, 1, text);
    assert.match(
      text,
      /^demo: could not start: Error: DATABASE_URL needs the development install: run `npm run deno -- task demo` \(/m,
    );
    assert.doesNotMatch(text, /not generated/);
  });

  it("links only stand-ins for code the demo never runs", () => {
    const links = read("demo/start.json").links as string[];
    const stands = links.map((link) => read(join("demo", link, "package.json")).name).sort();
    assert.deepEqual(stands, ["@microsoft/tsdoc", "@types/validator", "libphonenumber-js"]);
    // libphonenumber-js serves class-validator's phone-number checks only: no demo route uses one.
    const demoFiles = (dir: string): string[] =>
      readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory()
          ? entry.name === "node_modules" ? [] : demoFiles(join(dir, entry.name))
          : entry.name.endsWith(".ts")
          ? [join(dir, entry.name)]
          : []
      );
    const phone = demoFiles("demo").filter((file) =>
      /PhoneNumber|libphonenumber|@microsoft\/tsdoc/.test(readFileSync(join(ROOT, file), "utf8"))
    );
    assert.deepEqual(phone, []);
  });

  it("the committed page bundles were built from the current client/ (`deno task demo:bundle`)", async () => {
    const header = bundleHeader(clientDigest());
    for (
      const [file, build] of [
        ["demo/page/client.bundle.js", bundleClient],
        ["demo/page/elements.bundle.js", bundleElements],
      ] as const
    ) {
      const text = readFileSync(join(ROOT, file), "utf8");
      assert.ok(text.startsWith(header), `${file} is stale: run \`deno task demo:bundle\``);
      assert.equal(text.slice(header.length), await build(), `${file} differs from a fresh bundle`);
    }
  });
});
