import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  createPublicRevocationHandler,
  createSecretScanningPartnerHandler,
  type PublicRevocationHandler,
} from "../../../api_keys/mod.ts";
import { createLeakReportFetchHandler } from "../../../api_keys/fetch/api_keys.leaks.ts";
import { createSigner } from "../leaks/github_signer.ts";
import { makeService, READ_ORDERS } from "../helpers.ts";
import { serve, type Served } from "../../scenarios/_serve.ts";

describe("createLeakReportFetchHandler over HTTP (Deno.serve on Deno, @hono/node-server on Node)", () => {
  const log: string[] = [];
  const { service } = makeService({ onEvent: (event) => void log.push(event.type) });
  let signer: Awaited<ReturnType<typeof createSigner>>;
  let server: Served;
  let base: string;
  let publicReport: PublicRevocationHandler;
  let seen: number[] = [];

  before(async () => {
    signer = await createSigner();
    const partner = createLeakReportFetchHandler(createSecretScanningPartnerHandler({
      service,
      publicKeys: [{ key_identifier: signer.keyIdentifier, key: signer.pem }],
      maxBodyBytes: 2_048,
    }));
    publicReport = createPublicRevocationHandler({ service });
    const reportHandler = createLeakReportFetchHandler(publicReport);
    server = await serve((request) => {
      const path = new URL(request.url).pathname;
      if (path === "/partner") return partner(request);
      if (path === "/report") return reportHandler(request);
      return new Response(null, { status: 404 });
    });
    base = server.url;
  });
  after(() => server.close());

  const signedPost = async (body: string, signature?: string) => {
    const response = await fetch(`${base}/partner`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "github-public-key-identifier": signer.keyIdentifier,
        "github-public-key-signature": signature ?? await signer.sign(body),
      },
      body,
    });
    return { status: response.status, body: await response.json() };
  };

  it("revokes a key from a signed partner report and refuses a bad signature", async () => {
    const { key } = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
    const body = JSON.stringify([{
      token: key,
      type: "saferoute_api_key",
      url: "https://x",
      source: "content",
    }]);
    const forged = await signedPost(body, await signer.sign(`${body} `));
    assert.equal(forged.status, 401);
    assert.equal(forged.body.error.code, "secret_scanning_signature_invalid");
    await service.verify(key); // still valid after the forged report
    log.length = 0;
    const signed = await signedPost(body);
    assert.deepEqual(signed, { status: 200, body: [] });
    assert.deepEqual(log, ["api_key.exposed", "api_key.revoked"]);
    await assert.rejects(service.verify(key), { code: "api_key_revoked" });
  });

  it("reads at most one byte past the handler's bound: a larger body is the handler's 413", async () => {
    const big = JSON.stringify([{ token: "x".repeat(4_000), type: "t" }]);
    const response = await signedPost(big);
    assert.equal(response.status, 413);
    assert.equal(response.body.error.code, "secret_scanning_payload_too_large");
  });

  it("refuses a partner report without signature headers before reading its body", async () => {
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new Uint8Array(1_024));
      },
    });
    const handler = createLeakReportFetchHandler(createSecretScanningPartnerHandler({
      service,
      publicKeys: [{ key_identifier: signer.keyIdentifier, key: signer.pem }],
    }));
    const request = new Request("http://localhost/partner", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
      duplex: "half",
    } as RequestInit);
    const response = await handler(request);
    assert.equal(response.status, 401);
    assert.equal((await response.json()).error.code, "secret_scanning_signature_invalid");
    assert.equal(request.bodyUsed, false);
    assert.equal(pulled <= 1, true); // a stream may pull once as it is made; never read on
  });

  it("answers the public report with the fixed 202 and revokes afterwards", async () => {
    const { key } = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
    seen = [];
    const answers: string[] = [];
    for (const body of [`key=${encodeURIComponent(key)}`, "key=nope"]) {
      const response = await fetch(`${base}/report`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body,
      });
      seen.push(response.status);
      answers.push(
        `${response.headers.get("content-type")}|${
          response.headers.get("cache-control")
        }|${await response
          .text()}`,
      );
    }
    assert.deepEqual(seen, [202, 202]);
    assert.equal(answers[0], answers[1]);
    await publicReport.drain();
    await assert.rejects(service.verify(key), { code: "api_key_revoked" });
  });

  it("a request whose body something read first is a TypeError (a 500), never an empty report answered 202 that revokes nothing", async () => {
    const handler = createLeakReportFetchHandler(publicReport);
    const request = new Request("http://localhost/report", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "key=ak_live_x",
    });
    await request.text(); // a middleware read it
    await assert.rejects(handler(request), /the request's body was already read/);
  });

  it("refuses what is not a leaked-key handler", () => {
    assert.throws(
      () => createLeakReportFetchHandler((() => {}) as never),
      /needs a leaked-key handler/,
    );
  });
});
