import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

const denoJson = JSON.parse(readFileSync(new URL("../deno.json", import.meta.url), "utf8"));
const jsrJson = JSON.parse(readFileSync(new URL("../jsr.json", import.meta.url), "utf8"));

describe("package metadata", () => {
  it("deno.json and jsr.json agree on name, version, license and exports", () => {
    for (const field of ["name", "version", "license", "exports"]) {
      assert.deepEqual(jsrJson[field], denoJson[field], field);
    }
  });

  it("exports the seventeen documented subpaths", () => {
    assert.deepEqual(Object.keys(denoJson.exports).sort(), [
      ".",
      "./api-keys",
      "./api-keys/admin",
      "./api-keys/fetch",
      "./api-keys/leaks",
      "./api-keys/nest",
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

  it("maps every npm dependency with an exact version (`name-x.y.z`: another tested version)", () => {
    for (const [alias, target] of Object.entries(denoJson.imports as Record<string, string>)) {
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
});
