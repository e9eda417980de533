import "reflect-metadata";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import http2 from "node:http2";
import { Controller, type INestApplication, Inject, Module, Post, Req, Res } from "@nestjs/common";
import { APP_GUARD, NestFactory } from "@nestjs/core";
import type { NestExpressApplication } from "@nestjs/platform-express";
import { FastifyAdapter } from "@nestjs/platform-fastify";
import {
  ApiKeysService,
  createPublicRevocationHandler,
  createSecretScanningPartnerHandler,
  InMemoryApiKeyStorage,
  type LeakReportHandler,
  type PublicRevocationHandler,
} from "../../../api_keys/mod.ts";
import {
  leakReportFromRequest,
  type LeakReportHttpRequest,
  type LeakReportHttpResponse,
  sendLeakReport,
} from "../../../api_keys/nest/api_keys.leaks.ts";
import { createSigner } from "../leaks/github_signer.ts";
import { closeApp } from "../../close_app.ts";
import { ApiKeysModule } from "../../../api_keys/nest/api_keys.module.ts";
import { ApiKeysGuard } from "../../../api_keys/nest/api_keys.guard.ts";
import { SkipApiKey } from "../../../api_keys/nest/api_keys.decorators.ts";
import { issue, moduleOptions, PEPPER, PLATFORMS } from "./test_app.ts";

const READ_ORDERS = [{ resource: "orders", level: "read" as const }];

for (const platform of PLATFORMS) {
  describe(`leaked-key handlers in a Nest controller (${platform}, rawBody: true)`, () => {
    const events: string[] = [];
    const service = new ApiKeysService({
      peppers: { 1: PEPPER },
      storage: new InMemoryApiKeyStorage(),
      onEvent: (event) => void events.push(event.type),
    });
    let signer: Awaited<ReturnType<typeof createSigner>>;
    let app: INestApplication;
    let base: string;
    let report: PublicRevocationHandler;

    before(async () => {
      signer = await createSigner();
      const partner = createSecretScanningPartnerHandler({
        service,
        publicKeys: [{ key_identifier: signer.keyIdentifier, key: signer.pem }],
      });
      report = createPublicRevocationHandler({ service });
      const serve =
        (handle: LeakReportHandler) =>
        async (req: LeakReportHttpRequest, res: LeakReportHttpResponse) =>
          sendLeakReport(res, await handle(leakReportFromRequest(req)));

      @Controller()
      class LeaksController {
        @Post("partner")
        partner(@Req() req: LeakReportHttpRequest, @Res() res: LeakReportHttpResponse) {
          return serve(partner)(req, res);
        }

        @Post("report")
        report(@Req() req: LeakReportHttpRequest, @Res() res: LeakReportHttpResponse) {
          return serve(report)(req, res);
        }
      }
      @Module({ controllers: [LeaksController] })
      class LeaksModule {}

      const options = { logger: false as const, abortOnError: false, rawBody: true };
      app = platform === "express"
        ? await NestFactory.create(LeaksModule, options)
        : await NestFactory.create(LeaksModule, new FastifyAdapter(), options);
      // As docs/api-keys-nest.md says: Express parses no text/plain body unless told to.
      if (platform === "express") (app as NestExpressApplication).useBodyParser("text");
      await app.listen(0, "127.0.0.1");
      base = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
    });
    after(() => closeApp(app));

    const partnerPost = async (body: string, signature: string) => {
      const response = await fetch(`${base}/partner`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "github-public-key-identifier": signer.keyIdentifier,
          "github-public-key-signature": signature,
        },
        body,
      });
      return {
        status: response.status,
        type: response.headers.get("content-type"),
        body: await response.json(),
      };
    };

    it("verifies the signature over the raw bytes and revokes the reported key", async () => {
      const { key } = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
      // spacing JSON.stringify would not produce: a re-serialized body would not verify
      const body = `[ {"token": "${key}", "type": "t", "source": "content"} ]`;
      const forged = await partnerPost(body, await signer.sign(body.replace("content", "commit")));
      assert.equal(forged.status, 401);
      assert.equal(forged.body.error.code, "secret_scanning_signature_invalid");
      await service.verify(key);
      events.length = 0;
      const signed = await partnerPost(body, await signer.sign(body));
      assert.deepEqual(signed, {
        status: 200,
        type: "application/json; charset=utf-8",
        body: [],
      });
      assert.deepEqual(events, ["api_key.exposed", "api_key.revoked"]);
      await assert.rejects(service.verify(key), { code: "api_key_revoked" });
    });

    it("answers a public report (form or JSON) with the fixed 202, then revokes", async () => {
      const { key } = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
      const answers = new Set<string>();
      for (
        const [type, body] of [
          ["application/x-www-form-urlencoded", "key=not-a-key"],
          ["application/json", JSON.stringify({ key })],
        ]
      ) {
        const response = await fetch(`${base}/report`, {
          method: "POST",
          headers: { "content-type": type },
          body,
        });
        answers.add(`${response.status} ${await response.text()}`);
      }
      assert.deepEqual([...answers], [
        '202 {"success":true,"statusCode":202,"data":{"status":"received"}}',
      ]);
      await report.drain();
      await assert.rejects(service.verify(key), { code: "api_key_revoked" });
    });

    it("revokes a key posted as the whole text/plain body", async () => {
      const { key } = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
      const response = await fetch(`${base}/report`, {
        method: "POST",
        headers: { "content-type": "text/plain" },
        body: key,
      });
      assert.equal(response.status, 202);
      await response.body?.cancel();
      await report.drain();
      await assert.rejects(service.verify(key), { code: "api_key_revoked" });
    });
  });
}

for (const platform of PLATFORMS) {
  it(`under a global ApiKeysGuard, a @SkipApiKey() leak route answers 202 and revokes (${platform})`, async () => {
    @Controller()
    class LeakedKeysController {
      readonly report: PublicRevocationHandler;
      constructor(@Inject(ApiKeysService) service: ApiKeysService) {
        this.report = createPublicRevocationHandler({ service });
      }

      @Post("leaked-keys")
      @SkipApiKey()
      async leaked(@Req() req: LeakReportHttpRequest, @Res() res: LeakReportHttpResponse) {
        sendLeakReport(res, await this.report(leakReportFromRequest(req)));
      }

      @Post("guarded")
      guarded() {
        return { ok: true };
      }
    }
    @Module({
      imports: [ApiKeysModule.forRoot(moduleOptions())],
      controllers: [LeakedKeysController],
      providers: [{ provide: APP_GUARD, useExisting: ApiKeysGuard }],
    })
    class AppModule {}
    const options = { logger: false as const, abortOnError: false, rawBody: true };
    const app = platform === "express"
      ? await NestFactory.create(AppModule, options)
      : await NestFactory.create(AppModule, new FastifyAdapter(), options);
    if (platform === "express") (app as NestExpressApplication).useBodyParser("text");
    await app.listen(0, "127.0.0.1");
    const base = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
    try {
      const service = app.get(ApiKeysService);
      const { key } = await issue(service);
      const post = (path: string) =>
        fetch(`${base}${path}`, {
          method: "POST",
          headers: { "content-type": "text/plain" },
          body: key,
        });
      const guarded = await post("/guarded");
      await guarded.body?.cancel();
      assert.equal(guarded.status, 401, "the other routes keep the global guard");
      const reported = await post("/leaked-keys");
      await reported.body?.cancel();
      assert.equal(reported.status, 202);
      await app.get(LeakedKeysController).report.drain();
      await assert.rejects(service.verify(key), { code: "api_key_revoked" });
    } finally {
      await closeApp(app);
    }
  });
}

/** An app module whose `POST /report` hands each request to `report`, as docs/api-keys-nest.md does. */
function reportModule(report: PublicRevocationHandler) {
  @Controller()
  class ReportController {
    @Post("report")
    async report(@Req() req: LeakReportHttpRequest, @Res() res: LeakReportHttpResponse) {
      sendLeakReport(res, await report(leakReportFromRequest(req)));
    }
  }
  @Module({ controllers: [ReportController] })
  class ReportModule {}
  return ReportModule;
}

describe("a body Express did not parse (text/plain without useBodyParser('text'))", () => {
  const service = new ApiKeysService({
    peppers: { 1: PEPPER },
    storage: new InMemoryApiKeyStorage(),
  });
  let app: INestApplication;
  let base: string;
  let report: PublicRevocationHandler;
  before(async () => {
    report = createPublicRevocationHandler({ service });
    const ReportModule = reportModule(report);
    app = await NestFactory.create(ReportModule, {
      logger: false,
      abortOnError: false,
      rawBody: true,
    });
    await app.listen(0, "127.0.0.1");
    base = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
  });
  after(() => closeApp(app));

  it("fails loudly (500, one warning without the key) instead of a 202 that revokes nothing", async () => {
    const { key } = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
    const warnings: string[] = [];
    const warn = console.warn;
    console.warn = (...args: unknown[]) => void warnings.push(args.join(" "));
    const statuses: number[] = [];
    try {
      for (
        const body of [
          key,
          new ReadableStream<Uint8Array>({ // chunked: no content-length
            start(controller) {
              controller.enqueue(new TextEncoder().encode(key));
              controller.close();
            },
          }),
        ]
      ) {
        const response = await fetch(`${base}/report`, {
          method: "POST",
          headers: { "content-type": "text/plain" },
          body,
          duplex: "half", // a stream body (Node's fetch requires it)
        } as RequestInit);
        statuses.push(response.status);
        await response.body?.cancel();
      }
    } finally {
      console.warn = warn;
    }
    assert.deepEqual(statuses, [500, 500]);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0], /useBodyParser\("text"\)/);
    assert.ok(!warnings[0].includes(key));
    assert.deepEqual(report.stats().received, 0);
    await service.verify(key); // nothing was queued under a stand-in
  });

  it("still answers 202 to a request with no body", async () => {
    const response = await fetch(`${base}/report`, { method: "POST" });
    assert.equal(response.status, 202);
    await response.body?.cancel();
  });
});

describe("a body Fastify left unparsed over HTTP/2 (no content-type, no content-length)", () => {
  it("fails loudly (500) instead of a 202 that revokes nothing; a request without a body still 202", async () => {
    const service = new ApiKeysService({
      peppers: { 1: PEPPER },
      storage: new InMemoryApiKeyStorage(),
    });
    const report = createPublicRevocationHandler({ service });
    const ReportModule = reportModule(report);
    const app = await NestFactory.create(
      ReportModule,
      new FastifyAdapter({ http2: true } as ConstructorParameters<typeof FastifyAdapter>[0]),
      { logger: false, abortOnError: false, rawBody: true },
    );
    await app.listen(0, "127.0.0.1");
    const client = http2.connect(`http://127.0.0.1:${app.getHttpServer().address().port}`);
    const warn = console.warn;
    console.warn = () => {};
    try {
      const { key } = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
      const post = (body: string | undefined) =>
        new Promise<number>((resolve, reject) => {
          const stream = client.request(
            { ":method": "POST", ":path": "/report" },
            { endStream: body === undefined },
          );
          let status = 0;
          stream.on("response", (headers) => (status = Number(headers[":status"])));
          stream.on("data", () => {});
          stream.on("end", () => resolve(status));
          stream.on("error", reject);
          if (body !== undefined) stream.end(body);
        });
      assert.equal(await post(key), 500);
      assert.equal(report.stats().received, 0);
      await service.verify(key); // nothing was queued under a stand-in
      assert.equal(await post(undefined), 202);
    } finally {
      console.warn = warn;
      client.close();
      await closeApp(app);
    }
  });
});

describe("leakReportFromRequest", () => {
  it("refuses a body parsed into an object without its raw bytes", () => {
    assert.throws(
      () => leakReportFromRequest({ headers: {}, body: { key: "x" } }),
      /rawBody: true/,
    );
  });

  it("refuses a request that sent a body it cannot read; an empty one is an empty body", () => {
    for (const headers of [{ "content-length": "48" }, { "transfer-encoding": "chunked" }]) {
      assert.throws(() => leakReportFromRequest({ headers }), /useBodyParser\("text"\)/);
    }
    const empty = leakReportFromRequest({ headers: { "content-length": "0" } });
    assert.deepEqual(empty.body, new Uint8Array(0));
  });

  it("reads headers case-insensitively and joins repeated ones", () => {
    const request = leakReportFromRequest({
      headers: { "github-public-key-identifier": "k1", "x-many": ["a", "b"] },
      body: "text",
    });
    assert.equal(request.headers("Github-Public-Key-Identifier"), "k1");
    assert.equal(request.headers("x-many"), "a, b");
    assert.equal(request.body, "text");
  });
});
