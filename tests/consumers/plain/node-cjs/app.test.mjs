import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { assertNoNestPeers, assertShipsPrisma, MISSING_PEERS } from "../shared.mjs";

const require = createRequire(import.meta.url);
const { server, service } = require("./app.cjs");

describe("a plain Node app (CommonJS) without Nest", () => {
  it("npm ls lists none of the Nest peers", () => assertNoNestPeers());

  it("has the repository's prisma/ (schema, migrations) byte for byte", () => assertShipsPrisma());

  it("serves over node:http with a key", async () => {
    const { key } = await service.create({
      tenantId: "acme",
      name: "ci",
      scopes: [{ resource: "orders", level: "read" }],
    });
    await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${server.address().port}/`;
      const ok = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
      assert.equal(ok.status, 200);
      assert.equal((await ok.json()).data, "acme");
      assert.equal((await fetch(url)).status, 401);
    } finally {
      server.close();
    }
  });

  it("require() of an entry whose optional peer is missing names the install command", () => {
    for (const [entry, peers] of Object.entries(MISSING_PEERS)) {
      assert.throws(
        () => require(entry),
        (error) =>
          error.message.includes(`npm install ${peers.join(" ")}`) &&
          error.cause?.code === "MODULE_NOT_FOUND",
        entry,
      );
    }
  });
});
