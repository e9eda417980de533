import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import {
  appDependencies,
  appId,
  appPackageJson,
  type Matrix,
  peerRange,
  peerRanges,
  renderCompatibilityDoc,
  validateMatrix,
} from "./consumers/matrix.ts";

/** A small matrix: Nest 10 and 11 at both ends, one app per set. */
function sample(): Matrix {
  const set = (nest: 10 | 11, end: "lowest" | "highest", v: string, rm: string) => ({
    nest,
    end,
    packages: {
      "@nestjs/common": v,
      "@nestjs/platform-express": v,
      "@nestjs/platform-fastify": v,
      "@fastify/static": "7.0.0",
      "@nestjs/swagger": nest === 10 ? "8.0.0" : "11.0.0",
      "reflect-metadata": rm,
    },
    integrations: { "nestjs-cls": "6.0.0" },
  });
  return {
    node: "20",
    suite: { dir: "tests/consumers/shared", swaggerOnly: ["openapi.ts"] },
    devDependencies: { typescript: "6.0.3" },
    swaggerDevDependencies: { "@apidevtools/swagger-parser": "12.1.0" },
    peers: {
      "@nestjs/common": { optional: false },
      "reflect-metadata": { optional: false },
      "nestjs-cls": { optional: true },
    },
    platforms: {
      express: {
        adapter: "@nestjs/platform-express",
        adapterClass: "ExpressAdapter",
        server: "express",
        majors: { "10": 4, "11": 5 },
      },
      fastify: {
        adapter: "@nestjs/platform-fastify",
        adapterClass: "FastifyAdapter",
        server: "fastify",
        majors: { "10": 4, "11": 5 },
        withSwagger: ["@fastify/static"],
      },
    },
    sets: {
      "nest10-lowest": set(10, "lowest", "10.0.0", "0.1.13"),
      "nest10-highest": set(10, "highest", "10.4.22", "0.2.2"),
      "nest11-lowest": set(11, "lowest", "11.0.1", "0.2.0"),
      "nest11-highest": set(11, "highest", "11.2.10", "0.2.2"),
    },
    apps: [
      { set: "nest10-lowest", module: "cjs", platform: "express", swagger: true },
      { set: "nest10-highest", module: "cjs", platform: "fastify", swagger: true },
      { set: "nest11-lowest", module: "esm", platform: "fastify", swagger: false },
      { set: "nest11-highest", module: "cjs", platform: "express", swagger: true },
    ],
    known: [],
    untested: [],
    prisma: [],
  };
}

describe("compatibility matrix", () => {
  it("derives each peer range from the lowest tested version of every major", () => {
    const matrix = sample();
    assert.equal(peerRange(matrix, "@nestjs/common"), "^10.0.0 || ^11.0.1");
    assert.equal(peerRange(matrix, "reflect-metadata"), "^0.1.13 || ^0.2.0");
    assert.deepEqual(peerRanges(matrix)["nestjs-cls"], { range: "^6.0.0", optional: true });
  });

  it("leaves a set only pending apps use out of the peer ranges", () => {
    const matrix = sample();
    matrix.apps[0].pending = "not yet";
    assert.equal(peerRange(matrix, "@nestjs/common"), "^10.4.22 || ^11.0.1");
    matrix.apps[1].pending = "not yet";
    assert.equal(peerRange(matrix, "@nestjs/common"), "^11.0.1");
  });

  it("installs only the app's platform, and swagger's extras only with swagger", () => {
    const matrix = sample();
    const [express, fastify, bare] = matrix.apps;
    assert.deepEqual(Object.keys(appDependencies(matrix, express)), [
      "@nestjs/common",
      "@nestjs/platform-express",
      "@nestjs/swagger",
      "nestjs-cls",
      "reflect-metadata",
    ]);
    assert.ok("@fastify/static" in appDependencies(matrix, fastify));
    const noSwagger = appDependencies(matrix, bare);
    assert.ok(!("@nestjs/swagger" in noSwagger) && !("@fastify/static" in noSwagger));
    assert.equal(appId(matrix, bare), "nest11-esm-fastify-lowest-noswagger");
    assert.equal(appPackageJson(matrix, bare).type, "module");
    assert.equal(appPackageJson(matrix, express).type, undefined);
  });

  it("derives the swagger range from the apps that install swagger only", () => {
    const matrix = sample();
    assert.equal(peerRange(matrix, "@nestjs/swagger"), "^8.0.0 || ^11.0.0");
    matrix.sets["nest11-lowest"].packages["@nestjs/swagger"] = "11.0.0";
    matrix.sets["nest11-highest"].packages["@nestjs/swagger"] = "11.4.7";
    matrix.apps[3].swagger = false;
    // nest11-lowest's only app has no swagger: 11.x is tested nowhere
    assert.equal(peerRange(matrix, "@nestjs/swagger"), "^8.0.0");
  });

  it("pins a release inside a set: its id, dependencies, docs and peer range", () => {
    const matrix = sample();
    const pinned = { ...matrix.apps[3], packages: { "@nestjs/swagger": "11.2.6" } };
    matrix.apps.push(pinned);
    assert.equal(appId(matrix, pinned), "nest11-cjs-express-highest-swagger11.2.6");
    assert.equal(appDependencies(matrix, pinned)["@nestjs/swagger"], "11.2.6");
    assert.equal(appDependencies(matrix, matrix.apps[3])["@nestjs/swagger"], "11.0.0");
    assert.match(
      renderCompatibilityDoc(matrix),
      /\| `nest11-cjs-express-highest-swagger11\.2\.6` \|.*\| 11\.2\.6 \| runs \|/,
    );
    pinned.packages = { "@nestjs/swagger": "10.0.0" };
    assert.equal(peerRange(matrix, "@nestjs/swagger"), "^8.0.0 || ^10.0.0 || ^11.0.0");
    matrix.apps.push({ ...matrix.apps[0], packages: { express: "4.0.0" } });
    assert.throws(() => validateMatrix(matrix), /pins express, not in its set/);
  });

  it("pins an integration inside a set: its dependencies, the docs' versions and a peer's range", () => {
    const matrix = sample();
    const pinned = { ...matrix.apps[0], swagger: false, packages: { "nestjs-cls": "5.4.0" } };
    matrix.apps.push(pinned);
    assert.equal(appId(matrix, pinned), "nest10-cjs-express-lowest-noswagger-nestjs-cls5.4.0");
    assert.equal(appDependencies(matrix, pinned)["nestjs-cls"], "5.4.0");
    assert.equal(appDependencies(matrix, matrix.apps[0])["nestjs-cls"], "6.0.0");
    assert.match(
      renderCompatibilityDoc(matrix),
      /\| `nest10-cjs-express-lowest-noswagger-nestjs-cls5\.4\.0` \|.*\| nest10-lowest, `nestjs-cls` 5\.4\.0 \| not installed \| runs \|/,
    );
    assert.equal(peerRange(matrix, "nestjs-cls"), "^5.4.0 || ^6.0.0");
  });

  it("installs swagger's dev tools only with swagger", () => {
    const matrix = sample();
    const devDependencies = (app: number) =>
      Object.keys(appPackageJson(matrix, matrix.apps[app]).devDependencies as object);
    assert.deepEqual(devDependencies(0), ["@apidevtools/swagger-parser", "typescript"]);
    assert.deepEqual(devDependencies(2), ["typescript"]);
  });

  it("derives a store client's range from the versions the rate-limit suite tests", () => {
    const matrix = sample();
    matrix.peers.redis = { optional: true };
    assert.throws(
      () => validateMatrix(matrix),
      /set nest10-lowest has no version of the peer redis/,
    );
    matrix.storeClients = { redis: { versions: ["6.3.1", "6.3.0", "5.1.0"], tested: "limits" } };
    validateMatrix(matrix);
    assert.equal(peerRange(matrix, "redis"), "^5.1.0 || ^6.3.0");
    assert.ok(
      renderCompatibilityDoc(matrix).includes(
        "| `redis` | `^5.1.0 \\|\\| ^6.3.0` | 6.3.1, 6.3.0, 5.1.0 | limits |",
      ),
    );
    matrix.storeClients.ioredis = { versions: ["5.0.0"], tested: "limits" };
    assert.throws(() => validateMatrix(matrix), /store client ioredis is not a peer/);
  });

  it("states the TypeScript the declarations need and the one every app compiles with", () => {
    const matrix = sample();
    matrix.devDependencies.typescript = "6.1.0";
    const doc = renderCompatibilityDoc(matrix);
    assert.match(doc, /## TypeScript\n/);
    assert.ok(doc.includes("TypeScript 5.7 or later, or `skipLibCheck: true`"), doc);
    assert.ok(doc.includes("`typescript` 6.1.0"), doc);
  });

  it("says how a bundled app loads the optional peers", () => {
    assert.match(renderCompatibilityDoc(sample()), /## Bundling\n/);
  });

  it("rejects an app naming an unknown set, or listed twice", () => {
    const matrix = sample();
    matrix.apps.push({ ...matrix.apps[0] });
    assert.throws(() => validateMatrix(matrix), /listed twice/);
    matrix.apps.pop();
    matrix.apps.push({ set: "nest9-lowest", module: "cjs", platform: "express", swagger: true });
    assert.throws(() => validateMatrix(matrix), /unknown set/);
  });
});

// The repository's own files: absent from the Node run's test tree, which holds the built package.
const inRepository = typeof (globalThis as { Deno?: unknown }).Deno !== "undefined";
const root = new URL("../", import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), "utf8");

describe("the repository follows tests/consumers/matrix.json", { skip: !inRepository }, () => {
  const matrix = JSON.parse(read("tests/consumers/matrix.json")) as Matrix;

  it("docs/compatibility.md is generated from it (deno task update:consumers --docs)", () => {
    assert.equal(read("docs/compatibility.md"), renderCompatibilityDoc(matrix));
  });

  it("every app folder is a matrix app with its generated package.json", () => {
    const ids = matrix.apps.map((app) => appId(matrix, app)).sort();
    assert.deepEqual(readdirSync(new URL("tests/consumers/apps/", root)).sort(), ids);
    for (const app of matrix.apps) {
      const id = appId(matrix, app);
      assert.equal(
        read(`tests/consumers/apps/${id}/package.json`),
        `${JSON.stringify(appPackageJson(matrix, app), null, 2)}\n`,
        `${id}: run deno task update:consumers`,
      );
    }
  });

  it("every lockfile locks the app's third-party dependencies, never the package", () => {
    for (const app of matrix.apps) {
      const id = appId(matrix, app);
      const path = `tests/consumers/apps/${id}/package-lock.json`;
      assert.ok(existsSync(new URL(path, root)), `${id} has a lockfile`);
      const lock = JSON.parse(read(path));
      const pkg = appPackageJson(matrix, app);
      assert.deepEqual(lock.packages[""].dependencies, pkg.dependencies, id);
      assert.deepEqual(lock.packages[""].devDependencies, pkg.devDependencies, id);
      const locked = Object.keys(lock.packages).filter((key) => key.includes("@saferoute/"));
      assert.deepEqual(locked, [], `${id} locks no @saferoute package`);
      for (const [name, version] of Object.entries(pkg.dependencies as Record<string, string>)) {
        assert.equal(lock.packages[`node_modules/${name}`]?.version, version, `${id}: ${name}`);
      }
    }
  });

  it("deno.json installs every store client version the rate-limit suite tests", () => {
    // A ranged import (a peer the JSR package states) installs the version deno.lock resolves.
    const { specifiers } = JSON.parse(read("deno.lock")) as { specifiers: Record<string, string> };
    const installed = Object.values(JSON.parse(read("deno.json")).imports as Record<string, string>)
      .map((target) => `${target.replace(/@[^@]*$/, "")}@${specifiers[target]?.split("_")[0]}`);
    for (const [name, client] of Object.entries(matrix.storeClients ?? {})) {
      for (const version of client.versions) {
        assert.ok(
          installed.includes(`npm:${name}@${version}`),
          `deno.json installs ${name}@${version}`,
        );
      }
    }
  });

  it("the npm build declares exactly the derived peer ranges", async () => {
    // Imported by a computed name: the build script runs on Deno only.
    const module = "../scripts/npm_build/package_json.ts";
    const { splitDependencies } = await import(module);
    const deno = JSON.parse(read("deno.json"));
    const split = splitDependencies(deno, []);
    const peers = peerRanges(matrix);
    assert.deepEqual(
      split.peerDependencies,
      Object.fromEntries(Object.entries(peers).map(([name, peer]) => [name, peer.range])),
    );
    assert.deepEqual(
      Object.keys(split.peerDependenciesMeta),
      Object.keys(peers).filter((name) => peers[name].optional),
    );
  });
});
