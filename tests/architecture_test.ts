import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";

const root = new URL("../", import.meta.url);

/** Module specifiers a file imports or re-exports (static and dynamic); doc examples skipped. */
function importsOf(path: string): string[] {
  const source = readFileSync(new URL(path, root), "utf8").replace(/\/\*[\s\S]*?\*\//g, "");
  const pattern =
    /(?:import|export)\s[^"'`;]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']/g;
  return [...source.matchAll(pattern)].map((match) => match[1] ?? match[2]);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(new URL(dir, root)).filter((name) => name.endsWith(".ts")).map((name) =>
    `${dir}${name}`
  );
}

describe("architecture", () => {
  for (const core of ["api_keys/", "safe_response/", "api_keys/fetch/", "safe_response/fetch/"]) {
    it(`${core} imports nothing from Nest, rxjs, Node or the Nest bindings`, () => {
      for (const file of sourceFiles(core)) {
        for (const specifier of importsOf(file)) {
          assert.doesNotMatch(specifier, /^(@nestjs\/|rxjs|node:|reflect-metadata)|\/nest\//, file);
        }
      }
    });
  }

  it("only ./safe-response/openapi imports @nestjs/swagger (an optional peer)", () => {
    const dirs = [
      "api_keys/",
      "api_keys/nest/",
      "safe_response/",
      "safe_response/nest/",
      "client/",
    ];
    for (const file of dirs.flatMap(sourceFiles)) {
      assert.ok(!importsOf(file).some((s) => s.startsWith("@nestjs/swagger")), file);
    }
    const openapi = sourceFiles("safe_response/openapi/").filter((file) =>
      importsOf(file).includes("@nestjs/swagger")
    );
    assert.ok(openapi.length > 0);
  });

  it("the Fetch bindings import no npm package, and ./api-keys/fetch nothing of safe-response", () => {
    for (const file of sourceFiles("api_keys/fetch/")) {
      for (const specifier of importsOf(file)) assert.match(specifier, /^\.\.?\/[\w.]+\.ts$/, file);
    }
    for (const file of sourceFiles("safe_response/fetch/")) {
      for (const specifier of importsOf(file)) {
        assert.match(specifier, /^\.\.?\/[\w./]+\.ts$/, file);
      }
    }
  });

  it("client/ imports nothing outside itself", () => {
    for (const file of sourceFiles("client/")) {
      for (const specifier of importsOf(file)) assert.match(specifier, /^\.\/[\w.-]+\.ts$/, file);
    }
  });

  it("the api-keys core imports only ipaddr.js and @noble/hashes (the hasher) from npm", () => {
    const external = sourceFiles("api_keys/").flatMap(importsOf).filter((s) => !s.startsWith("."));
    assert.deepEqual([...new Set(external.map((s) => s.split("/")[0]))].sort(), [
      "@noble",
      "ipaddr.js",
    ]);
    const noble = sourceFiles("api_keys/").filter((file) =>
      importsOf(file).some((s) => s.startsWith("@noble/hashes/"))
    );
    assert.deepEqual(noble, ["api_keys/hasher.ts"]);
  });

  it("the rate-limits core imports only its own files, and its stores only the core", () => {
    for (const file of sourceFiles("rate_limits/")) {
      for (const specifier of importsOf(file)) assert.match(specifier, /^\.\/[\w.]+\.ts$/, file);
    }
    for (const dir of ["rate_limits/postgres/", "rate_limits/redis/"]) {
      for (const file of sourceFiles(dir)) {
        for (const specifier of importsOf(file)) {
          assert.match(specifier, /^(\.\/[\w.]+|\.\.\/(store|policy))\.ts$/, file);
        }
      }
    }
  });
});
