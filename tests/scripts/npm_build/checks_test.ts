import { describe, it } from "node:test";
import assert from "node:assert/strict";

// The build scripts run on Deno only (they read deno.json with Deno APIs).
const onDeno = "Deno" in globalThis;
const checks = "../../../scripts/npm_build/checks.ts"; // computed: Deno only

describe("npm pack list", { skip: !onDeno && "the build runs on Deno" }, () => {
  it("allows the code, the docs, the Prisma schema and the numbered migrations; nothing else", async () => {
    const { unexpectedPackedFiles } = await import(checks);
    const allowed = [
      "package.json",
      "README.md",
      "CHANGELOG.md",
      "esm/mod.js",
      "cjs/api_keys/mod.d.ts",
      "prisma/schema.prisma",
      "prisma/migrations/migration_lock.toml",
      "prisma/migrations/0001_init/migration.sql",
      "prisma/migrations/0025_credit_change_anchor/migration.sql",
    ];
    assert.deepEqual(unexpectedPackedFiles(allowed), []);
    const refused = [
      "tests/mod_test.js",
      "prisma/dev.db",
      "prisma/migrations/0026_x/notes.md",
      "prisma/migrations/draft/migration.sql",
      "mod.ts",
    ];
    assert.deepEqual(unexpectedPackedFiles([...allowed, ...refused]), refused);
  });
});
