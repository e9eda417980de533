// Checks both apps share: the installed tree holds no Nest peer, and a missing optional peer is an
// error naming its install command.
import { execFileSync } from "node:child_process";
import assert from "node:assert/strict";

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

/** The missing optional peers of each guarded entry and the install line its error names. */
export const MISSING_PEERS = {
  "@saferoute/api-kit/api-keys/postgres": "npm install pg",
  "@saferoute/api-kit/safe-response/openapi": "npm install @nestjs/common @nestjs/swagger",
  "@saferoute/api-kit/api-keys/nest": "npm install @nestjs/common @nestjs/core",
};
