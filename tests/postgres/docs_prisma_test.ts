/**
 * The doc blocks that use the generated Prisma Client (docs/api-keys.md, "PostgreSQL with
 * Prisma 7", and the fragments that continue the `prisma` context) type-check against the client
 * `prisma generate` writes, not the unit run's stand-in (tests/doc_blocks.ts): what a reader's
 * `tsc` sees, delegates included.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { allBlocks, programOf, typeCheckBlocks, TYPESCRIPT } from "../doc_blocks.ts";
import { ensureGenerated } from "./prisma_client.ts";

describe("the doc blocks on the generated Prisma Client", () => {
  const { blocks, examples } = allBlocks();
  const prismaBlocks = blocks.filter((block) =>
    TYPESCRIPT.has(block.lang) &&
    programOf(block, examples).code.includes("./generated/prisma/client.ts")
  );

  it(`type-check as printed (${prismaBlocks.length} blocks)`, async () => {
    assert.ok(prismaBlocks.length >= 2, "no block uses the generated client");
    await ensureGenerated();
    const { status, output } = typeCheckBlocks(prismaBlocks, examples, { realPrismaClient: true });
    assert.equal(status, 0, output);
  });
});
