-- The hash scheme of each key (`ApiKeyRecord.hashScheme`): `hmac-sha256` for
-- every key this library issues (the default, so existing rows need no
-- update), a legacy scheme (`sha256-pepper`, `sha256`) for imported keys until
-- they are upgraded on use. See docs/api-keys.md, "Bring your keys". Apply
-- after 0002_api_key_change_feed, like it:
-- `psql "$DATABASE_URL" -f prisma/migrations/0003_api_key_hash_scheme/migration.sql`.
--
-- * Optional for keys this library issued: `PrismaApiKeyStorage` reads a row
--   without the column as `hmac-sha256` and writes the field only when it is
--   not the default (or the model has it), so an unmigrated database keeps
--   working. Importing legacy hashes needs it.
-- * A constant default: PostgreSQL 11 and later add the column without
--   rewriting the table.
-- * Upgrades change "hash", "hash_scheme" and "pepper_version", so the change
--   feed of 0002 reports them as `updated` (fleet caches drop the prefix).

-- AlterTable
ALTER TABLE "api_keys" ADD COLUMN "hash_scheme" TEXT NOT NULL DEFAULT 'hmac-sha256';

-- AddCheckConstraint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_hash_scheme_known"
  CHECK ("hash_scheme" IN ('hmac-sha256', 'sha256-pepper', 'sha256'));
