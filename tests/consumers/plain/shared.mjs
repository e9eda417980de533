// Checks both apps share: the installed tree holds no Nest peer, a missing optional peer is an
// error naming it (with its install command in CommonJS), and the package ships the repository's
// prisma/.
import { execFileSync } from "node:child_process";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";

/** Peers only the Nest entry points use: a Fetch-only or core-only install must not pull them. */
export const NEST_PEERS = ["@nestjs/common", "@nestjs/core", "reflect-metadata", "rxjs"];

/** Every package installed, by name, as `npm ls --all --parseable` lists them (paths). */
export function installedNames() {
  const paths = execFileSync("npm", ["ls", "--all", "--parseable"], { encoding: "utf8" });
  return new Set(
    paths.split("\n").filter((path) => path.includes("node_modules"))
      .map((path) => path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length)),
  );
}

/** Asserts `npm ls` lists the package and none of the Nest peers. */
export function assertNoNestPeers() {
  const names = installedNames();
  assert.ok(names.has("@saferoute/api-kit"), [...names].join(", "));
  for (const peer of NEST_PEERS) assert.ok(!names.has(peer), `npm ls lists ${peer}`);
}

/** The missing optional peers of each guarded entry (the CommonJS error's install line lists them). */
export const MISSING_PEERS = {
  "@saferoute/api-kit/api-keys/postgres": ["pg"],
  "@saferoute/api-kit/safe-response/openapi": ["@nestjs/common", "@nestjs/swagger"],
  "@saferoute/api-kit/api-keys/nest": ["@nestjs/common", "@nestjs/core"],
};

/** Files under `dir`, relative to it, sorted. */
function filesUnder(dir, base = dir) {
  return readdirSync(dir).sort().flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path, base) : [path.slice(base.length + 1)];
  });
}

/**
 * Asserts the install holds the repository's `prisma/` (`API_KIT_PRISMA`, set by run.ts), every
 * file byte for byte, at the path docs/operations.md gives
 * (`node_modules/@saferoute/api-kit/prisma/migrations/<name>/migration.sql`).
 */
export function assertShipsPrisma() {
  const repository = process.env.API_KIT_PRISMA;
  assert.ok(repository, "API_KIT_PRISMA names the repository's prisma/");
  const installed = join("node_modules", "@saferoute", "api-kit", "prisma");
  const files = filesUnder(repository);
  assert.ok(files.includes("schema.prisma"), files.join(", "));
  assert.ok(files.includes(join("migrations", "0001_init", "migration.sql")), files.join(", "));
  assert.deepEqual(filesUnder(installed), files);
  for (const file of files) {
    assert.ok(
      readFileSync(join(installed, file)).equals(readFileSync(join(repository, file))),
      file,
    );
  }
}
