-- The lookup of a tenant's shared credit pool (`ApiKeyStorage.findTenantPool`,
-- `PrismaApiKeyStorage` with `storesCredits` on a client with
-- `$queryRawUnsafe`): the row holding the newest copy of the pool, by the
-- `updatedAt` of that copy in the `credits` JSON column (migration
-- `0011_api_key_credits`), then the newest row. Read by `GET /keys`,
-- `tenantCredits` and each key created with `sharedBy: "tenant"`; the pool's
-- write-back (`setTenantPool`) finds the rows spending the pool by it. The lookup
-- of the key a rotation replaced (`findByReplacement`) uses the index
-- `api_keys_replaced_by_key_id_idx` of migration `0016_api_key_pages`.
--
-- An index only: without it the answers are right, only slower (a scan of
-- the tenant's rows). The expression must stay written exactly as
-- `PrismaApiKeyStorage` queries it. `schema.prisma` cannot declare an index
-- on an expression: when `prisma migrate dev` proposes to drop this one,
-- remove that statement from the generated migration. Apply with
-- `psql "$DATABASE_URL" -f prisma/migrations/0018_api_key_tenant_pool/migration.sql`
-- (on a large live table, as CREATE INDEX CONCURRENTLY outside a transaction
-- instead).

-- CreateIndex
CREATE INDEX "api_keys_tenant_id_pool_updated_at_idx" ON "api_keys"(
  "tenant_id",
  (CASE WHEN credits->>'sharedBy' = 'tenant' THEN credits->>'updatedAt' ELSE credits->'pool'->>'updatedAt' END) DESC,
  "created_at" DESC,
  "id"
) WHERE (CASE WHEN credits->>'sharedBy' = 'tenant' THEN credits->>'updatedAt' ELSE credits->'pool'->>'updatedAt' END) IS NOT NULL;
