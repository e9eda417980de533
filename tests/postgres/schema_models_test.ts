/**
 * prisma/schema.prisma declares every table and column the migrations of
 * prisma/migrations leave (docs/api-keys.md tells `prisma migrate dev` users to
 * copy every model: a table or a column without one is one Prisma proposes to
 * drop), and each generated column as `@default(dbgenerated())`, which Prisma
 * never migrates (with no default it would propose `DROP DEFAULT`, which
 * PostgreSQL refuses on a generated column). The migrations are applied in a
 * schema of its own, dropped after. Skips without `DATABASE_URL`; fails under
 * `CI=true`.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import pg from "pg";
import { databaseReady, probeDatabase } from "./prisma_client.ts";

const url = Deno.env.get("DATABASE_URL");
const unavailable = await probeDatabase(url);
const MIGRATIONS = new URL("../../prisma/migrations/", import.meta.url);

/** Each model's table → its columns, each with whether it is `@default(dbgenerated())`. */
function prismaTables(schema: string): Map<string, Map<string, boolean>> {
  const tables = new Map<string, Map<string, boolean>>();
  for (const [, name, body] of schema.matchAll(/^model (\w+) \{\n([\s\S]*?)^\}/gm)) {
    const columns = new Map<string, boolean>();
    for (const line of body.split("\n")) {
      const field = line.match(/^\s+(\w+)\s+\S/);
      if (!field) continue;
      const column = line.match(/@map\("(\w+)"\)/)?.[1] ?? field[1];
      columns.set(column, line.includes("@default(dbgenerated())"));
    }
    tables.set(body.match(/@@map\("(\w+)"\)/)?.[1] ?? name, columns);
  }
  return tables;
}

if (databaseReady("prisma/schema.prisma against prisma/migrations", unavailable)) {
  describe("prisma/schema.prisma against prisma/migrations on PostgreSQL", () => {
    it("has a model for every table and a field for every column the migrations leave; generated columns are @default(dbgenerated())", async () => {
      const schema = `schema_models_${crypto.randomUUID().replaceAll("-", "")}`;
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`CREATE SCHEMA ${schema}; SET search_path TO ${schema}`);
        const names = [...Deno.readDirSync(MIGRATIONS)].filter((e) => e.isDirectory)
          .map((e) => e.name).sort();
        for (const name of names) {
          await client.query(
            await Deno.readTextFile(new URL(`${name}/migration.sql`, MIGRATIONS)),
          );
        }
        const { rows } = await client.query<
          { table: string; column: string; generated: boolean }
        >(
          "SELECT c.table_name AS table, c.column_name AS column, " +
            "c.is_generated = 'ALWAYS' AS generated FROM information_schema.columns c " +
            "JOIN information_schema.tables t USING (table_schema, table_name) " +
            "WHERE c.table_schema = $1 AND t.table_type = 'BASE TABLE' " +
            "ORDER BY 1, c.ordinal_position",
          [schema],
        );
        const models = prismaTables(
          await Deno.readTextFile(new URL("../../prisma/schema.prisma", import.meta.url)),
        );
        const missing = rows.filter((row) => !models.get(row.table)?.has(row.column))
          .map((row) => `${row.table}.${row.column}`);
        assert.deepEqual(missing, [], "columns without a field in prisma/schema.prisma");
        const wrong = rows.filter((row) => models.get(row.table)!.get(row.column) !== row.generated)
          .map((row) => `${row.table}.${row.column}`);
        assert.deepEqual(wrong, [], "generated columns and @default(dbgenerated()) disagree");
      } finally {
        await client.query(`DROP SCHEMA ${schema} CASCADE`);
        await client.end();
      }
    });
  });
}
