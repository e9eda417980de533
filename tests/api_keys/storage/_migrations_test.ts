/** A missing table, column or function names the migration that adds it. */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { MIGRATION_OF, missingMigrationError } from "../../../api_keys/storage/_migrations.ts";

const MIGRATIONS = new URL("../../../prisma/migrations/", import.meta.url);

/** Every table, column, function and index the migrations create → their migrations, oldest first. */
function fromSql(): Record<string, string[]> {
  const found: Record<string, string[]> = {};
  const created =
    /(?:CREATE TABLE(?: IF NOT EXISTS)?|ADD COLUMN(?: IF NOT EXISTS)?|CREATE (?:OR REPLACE )?FUNCTION|CREATE (?:UNIQUE )?INDEX(?: CONCURRENTLY)?(?: IF NOT EXISTS)?) "?(\w+)"?/gi;
  for (const name of readdirSync(MIGRATIONS).filter((entry) => /^\d{4}_/.test(entry)).sort()) {
    const sql = readFileSync(new URL(`${name}/migration.sql`, MIGRATIONS), "utf8")
      .replace(/--[^\n]*/g, "");
    for (const [, object] of sql.matchAll(created)) {
      const list = found[object] ??= [];
      if (!list.includes(name)) list.push(name);
    }
  }
  return found;
}

describe("api_keys/storage/_migrations.ts", () => {
  // The Node run's test tree holds the package's files, not prisma/.
  const noSql = !existsSync(MIGRATIONS) && "prisma/ is not in this test tree";
  it("knows every table, column, function and index of prisma/migrations, and its migrations", {
    skip: noSql,
  }, () => {
    const sql = fromSql();
    assert.deepEqual(
      Object.fromEntries(Object.entries(MIGRATION_OF).sort()),
      Object.fromEntries(Object.entries(sql).sort()),
    );
  });

  it("names the migration in PostgreSQL's and Prisma 7's words for a missing object", () => {
    // Messages as PostgreSQL 15 and Prisma 7.10 (adapter-pg) word them.
    const cases: [string, RegExp][] = [
      [
        "Invalid `prisma.apiKey.findMany()` invocation:\n\nThe column `api_keys.credits` does not exist in the current database.",
        /^the database has no column credits: apply prisma\/migrations\/0011_api_key_credits$/,
      ],
      [
        "The table `public.api_key_usage` does not exist in the current database.",
        /no table api_key_usage: apply prisma\/migrations\/0010_api_key_usage$/,
      ],
      ['relation "public.credit_balances" does not exist', /no table credit_balances: .*0009_/],
      ['column "layout" does not exist', /no column layout: .*0006_api_key_layout$/],
      [
        "Raw query failed. Code: `42883`. Message: `function rate_limit_check(text, integer) does not exist`",
        /no function rate_limit_check: apply prisma\/migrations\/0007_rate_limit_counters and prisma\/migrations\/0009_credit_balances$/,
      ],
    ];
    for (const [message, expected] of cases) {
      const cause = new Error(message);
      const error = missingMigrationError(cause);
      assert.match(error?.message ?? "(none)", expected, message);
      assert.equal(error?.cause, cause);
    }
  });

  it("leaves other errors alone", () => {
    for (
      const error of [
        new Error('column "nickname" does not exist'),
        new Error("connection refused"),
        "function credit_change() does not exist",
        undefined,
      ]
    ) {
      assert.equal(missingMigrationError(error), undefined);
    }
  });
});
