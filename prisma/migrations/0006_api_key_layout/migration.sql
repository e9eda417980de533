-- The layout a key was issued or imported in (`ApiKeyRecord.layout`): NULL for
-- the current layout (every key this library issues), a legacy layout's name
-- (e.g. 'nestarc-v0') for imported keys. With it a key verifies only in its
-- record's layout. Used by `PrismaApiKeyStorage` with the option
-- `storesLayout: true` (and the model field `layout`); without the option the
-- column is neither read nor written. Apply after 0003_api_key_hash_scheme:
-- `psql "$DATABASE_URL" -f prisma/migrations/0006_api_key_layout/migration.sql`.
--
-- * Nullable, no default: PostgreSQL adds the column without rewriting the
--   table, and existing rows read as the current layout.
-- * Legacy keys already in the table must be labelled before the option is
--   turned on, or they stop verifying. For keys imported in one legacy layout
--   and not yet upgraded on use:
--   UPDATE "api_keys" SET "layout" = 'nestarc-v0' WHERE "hash_scheme" <> 'hmac-sha256';
--   keys already upgraded are labelled by id (see docs/security.md, "Leaked keys").
-- * The layout never changes after insert, so the change feed of 0002 sees it
--   only in `created`.

-- AlterTable
ALTER TABLE "api_keys" ADD COLUMN "layout" TEXT;
