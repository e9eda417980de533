import { describe, it } from "node:test";
import assert from "node:assert/strict";
import app, { service } from "./app.mjs";
import { assertNoNestPeers, assertShipsPrisma, MISSING_PEERS } from "../shared.mjs";

describe("a Fetch app (ESM) without Nest", () => {
  it("npm ls lists none of the Nest peers", () => assertNoNestPeers());

  it("has the repository's prisma/ (schema, migrations) byte for byte", () => assertShipsPrisma());

  it("answers a keyed request and refuses one without a key", async () => {
    const { key } = await service.create({
      tenantId: "acme",
      name: "ci",
      scopes: [{ resource: "orders", level: "read" }],
    });
    const ok = await app.fetch(
      new Request("http://localhost/whoami", { headers: { authorization: `Bearer ${key}` } }),
    );
    assert.equal(ok.status, 200);
    assert.deepEqual((await ok.json()).data, { tenantId: "acme" });
    const refused = await app.fetch(new Request("http://localhost/whoami"));
    assert.equal(refused.status, 401);
  });

  it("import() of an entry whose optional peer is missing is Node's error naming it", async () => {
    for (const [entry, peers] of Object.entries(MISSING_PEERS)) {
      await assert.rejects(
        import(entry),
        (error) =>
          error.code === "ERR_MODULE_NOT_FOUND" &&
          peers.some((peer) => error.message.includes(`Cannot find package '${peer}'`)),
        entry,
      );
    }
  });
});
