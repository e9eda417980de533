/**
 * The code blocks of the manual marked `<!-- services -->` (docs/development.md, "Code blocks in
 * the docs") run as printed with `deno run` against this suite's PostgreSQL and Redis: the
 * programs read `DATABASE_URL` and `REDIS_URL`. The unit run type-checks them (tests/docs_test.ts).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { allBlocks, runBlock } from "../doc_blocks.ts";
import { DATABASE_URL, readyStores, REDIS_URL } from "./_services.ts";

const { blocks, examples } = allBlocks();
const ready = await readyStores("the doc blocks that need services");

if (ready.length === 2) {
  describe("the doc blocks that need PostgreSQL and Redis", () => {
    const services = blocks.filter((block) => block.services);
    it("include the Redis and the PostgreSQL store of docs/rate-limits.md", () => {
      const code = services.map((block) => block.code).join("\n");
      assert.match(code, /createRedisRateLimitStore\(/);
      assert.match(code, /createPostgresRateLimitStore\(/);
    });
    for (const block of services) {
      it(`${block.page}:${block.line} runs under deno run`, () => {
        const { status, output } = runBlock(block, examples, {
          DATABASE_URL: DATABASE_URL!,
          REDIS_URL: REDIS_URL!,
        });
        assert.equal(status, 0, output);
      });
    }
  });
}
