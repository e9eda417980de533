/**
 * Every function the migrations create runs with a fixed `search_path`
 * (`proconfig`): exactly `pg_catalog`, the migrations' schema, then `pg_temp`
 * (migration 0023), so neither a caller's `search_path`, nor a schema named
 * after the calling role (`"$user"`), nor a temporary table decides which
 * table or function a name inside it resolves to. Extension-owned functions
 * are not ours and are left out. Skips without `DATABASE_URL`; fails under
 * `CI=true`.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import pg from "pg";
import { databaseReady, probeDatabase } from "./prisma_client.ts";

const url = Deno.env.get("DATABASE_URL");
const unavailable = await probeDatabase(url);

/** The functions of the migrations' schema (the one holding `api_keys`), each with its `proconfig`. */
const FUNCTIONS_SQL = `SELECT p.oid::regprocedure::text AS signature, p.proconfig AS config
  FROM pg_proc p
  WHERE p.pronamespace = (SELECT relnamespace FROM pg_class WHERE oid = to_regclass('api_keys'))
    AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass
      AND d.objid = p.oid AND d.deptype = 'e')
  ORDER BY 1`;

if (databaseReady("search_path of the migrations' functions", unavailable)) {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  after(() => pool.end());

  /** The schema of the migrations (the one holding `api_keys`), quoted as an identifier. */
  const librarySchema = async () =>
    (await pool.query<{ s: string }>(
      "SELECT quote_ident(nspname) AS s FROM pg_namespace " +
        "WHERE oid = (SELECT relnamespace FROM pg_class WHERE oid = to_regclass('api_keys'))",
    )).rows[0].s;

  describe("the functions of prisma/migrations on PostgreSQL", () => {
    it("each sets its search_path", async () => {
      const { rows } = await pool.query<{ signature: string; config: string[] | null }>(
        FUNCTIONS_SQL,
      );
      const names = rows.map((row) => row.signature.replace(/\(.*/, ""));
      // The functions of the change feed, the audit log and the rate limits are all there.
      for (
        const name of [
          "api_key_change_emit",
          "api_key_change_notify",
          "api_key_audit_append",
          "rate_limit_credit_check",
        ]
      ) assert.ok(names.includes(name), `${name} in ${names.join(", ")}`);
      const without = rows
        .filter((row) => !(row.config ?? []).some((entry) => entry.startsWith("search_path=")))
        .map((row) => row.signature);
      assert.deepEqual(without, [], `functions without a search_path: ${without.join(", ")}`);
      // Exactly the catalog, the migrations' schema and the temporary schema last: no "$user".
      const schema = await librarySchema();
      const fixed = `search_path=pg_catalog, ${schema}, pg_temp`;
      const other = rows.filter((row) => !row.config?.includes(fixed))
        .map((row) => `${row.signature}: ${row.config}`);
      assert.deepEqual(other, [], `functions whose search_path is not "${fixed}"`);
    });

    it("a schema named after the calling role, or a temporary table, shadows none of its tables", async () => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      const schema = await librarySchema();
      const subject = `search-path-${crypto.randomUUID()}`;
      /** What credit_read answers for `subject`, which the library's credit_balances does not hold. */
      const read = async () =>
        (await client.query<{ balance: string | null }>(
          `SELECT balance::text FROM ${schema}.credit_read($1, $2, '{0}', '{0}', '{0}')`,
          [[subject], ["c"]],
        )).rows.map((row) => row.balance);
      const shadow = (table: string) =>
        client.query(
          `CREATE TABLE ${table} (LIKE ${schema}.credit_balances INCLUDING DEFAULTS);` +
            `INSERT INTO ${table} (subject, name, balance, as_of) VALUES ('${subject}', 'c', 424242, 0)`,
        );
      // Rolled back: no other session ever sees the schema (it would shadow their names too).
      await client.query("BEGIN");
      try {
        const { rows: [{ own }] } = await client.query<{ own: string }>(
          "SELECT quote_ident(current_user) AS own",
        );
        assert.notEqual(own, schema, "the library's schema is not named after the role");
        await client.query(`CREATE SCHEMA ${own}`);
        await shadow(`${own}.credit_balances`);
        assert.deepEqual(await read(), [null], `a table of schema ${own} ("$user")`);
        await client.query(`DROP SCHEMA ${own} CASCADE`);
        await shadow("pg_temp.credit_balances");
        assert.deepEqual(await read(), [null], "a temporary table");
      } finally {
        await client.query("ROLLBACK");
        await client.end();
      }
    });

    it("resolves its tables whatever the caller's search_path (audit append, change-feed trigger)", async () => {
      // A caller whose search_path holds only pg_catalog: an audit record is appended.
      const client = new pg.Client({ connectionString: url, options: "-c search_path=pg_catalog" });
      const tenant = `search-path-${crypto.randomUUID()}`;
      await client.connect();
      try {
        const s = await librarySchema();
        const { rows } = await client.query<{ seq: string }>(
          `SELECT seq::text AS seq FROM ${s}.api_key_audit_append($1, $2)`,
          [tenant, '{"action":"key.created"}'],
        );
        assert.deepEqual(rows, [{ seq: "1" }]);
        // The change-feed trigger (fired now, then rolled back: no notice, no counter bump) logs the insert.
        const prefix = tenant.slice(-12);
        await client.query("BEGIN");
        await client.query(
          `INSERT INTO ${s}.api_keys (id, tenant_id, name, environment, prefix, hash, pepper_version)` +
            " VALUES ($1, $2, 'n', 'test', $3, 'h', 1)",
          [tenant, tenant, prefix],
        );
        await client.query("SET CONSTRAINTS ALL IMMEDIATE");
        const logged = await client.query<{ kind: string }>(
          `SELECT kind FROM ${s}.api_key_change_log WHERE prefix = $1`,
          [prefix],
        );
        await client.query("ROLLBACK");
        assert.deepEqual(logged.rows, [{ kind: "created" }]);
      } finally {
        await client.end();
        await pool.query("DELETE FROM api_key_audit WHERE tenant_id = $1", [tenant]);
        await pool.query("DELETE FROM api_key_audit_heads WHERE tenant_id = $1", [tenant]);
      }
    });
  });
}
