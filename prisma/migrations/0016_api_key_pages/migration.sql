-- Pages of a tenant's keys (`ApiKeyStorage.listPageByTenant`, the admin
-- routes' `GET /keys`): one index per order, each ending with `id` (the
-- keyset of the cursor), and the lookup of the keys a page's keys replaced.
-- Indexes only: without them the pages are right, only slower. Apply with
-- `psql "$DATABASE_URL" -f prisma/migrations/0016_api_key_pages/migration.sql`
-- (on a large live table, run each statement as CREATE INDEX CONCURRENTLY
-- outside a transaction instead).

-- CreateIndex
CREATE INDEX "api_keys_tenant_id_created_at_id_idx" ON "api_keys"("tenant_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "api_keys_tenant_id_name_id_idx" ON "api_keys"("tenant_id", "name", "id");

-- CreateIndex
CREATE INDEX "api_keys_tenant_id_last_used_at_id_idx" ON "api_keys"("tenant_id", "last_used_at", "id");

-- CreateIndex
CREATE INDEX "api_keys_replaced_by_key_id_idx" ON "api_keys"("replaced_by_key_id");
