import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  GITHUB_SECRET_SCANNING_KEYS_URL,
  githubSecretScanningKeyResolver,
} from "../../../api_keys/leaks/github_public_keys.ts";
import { verifyDerSignature } from "../../../api_keys/leaks/_ecdsa_signature.ts";
import { createSigner, GITHUB_SAMPLE, p384PublicKeyPem } from "./github_signer.ts";
import { FakeClocks, rejection } from "../helpers.ts";

const SAMPLE_KEY = {
  key_identifier: GITHUB_SAMPLE.key_identifier,
  key: GITHUB_SAMPLE.public_key_pem,
  is_current: true,
};

/** A loopback stand-in for GitHub's meta endpoint, honouring If-None-Match. */
class MetaStub {
  keys: unknown[] = [SAMPLE_KEY];
  etag = '"v1"';
  status = 200;
  /** Raw body served instead of the key list, when set. */
  rawBody: string | undefined;
  readonly requests: IncomingHttpHeaders[] = [];
  readonly server: Server = createServer((request, response) => {
    this.requests.push(request.headers);
    if (this.status !== 200) {
      response.writeHead(this.status).end("nope");
    } else if (request.headers["if-none-match"] === this.etag) {
      response.writeHead(304, { etag: this.etag }).end();
    } else {
      response.writeHead(200, { "content-type": "application/json", etag: this.etag });
      response.end(this.rawBody ?? JSON.stringify({ public_keys: this.keys }));
    }
  });
  url = "";

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/meta/keys`;
  }

  reset(): void {
    this.keys = [SAMPLE_KEY];
    this.etag = '"v1"';
    this.status = 200;
    this.rawBody = undefined;
    this.requests.length = 0;
  }
}

const stub = new MetaStub();
const payload = new TextEncoder().encode(GITHUB_SAMPLE.payload);

function resolverWith(clocks: FakeClocks, extra: Record<string, unknown> = {}) {
  stub.reset();
  return githubSecretScanningKeyResolver({
    url: stub.url,
    monotonicClock: clocks.monotonicClock,
    ttlMs: 60_000,
    minRefreshIntervalMs: 10_000,
    ...extra,
  });
}

describe("githubSecretScanningKeyResolver (loopback stub)", () => {
  before(() => stub.start());
  after(() => new Promise<void>((resolve) => stub.server.close(() => resolve())));

  it("defaults to GitHub's meta endpoint", () => {
    assert.equal(
      GITHUB_SECRET_SCANNING_KEYS_URL,
      "https://api.github.com/meta/public_keys/secret_scanning",
    );
  });

  it("fetches once, then serves from the cache until the TTL ends", async () => {
    const clocks = new FakeClocks();
    const keys = resolverWith(clocks);
    const key = await keys.resolve(GITHUB_SAMPLE.key_identifier);
    assert.ok(key !== null);
    assert.equal(await verifyDerSignature(key, GITHUB_SAMPLE.signature, payload), true);
    clocks.advance(59_000);
    assert.equal(await keys.resolve(GITHUB_SAMPLE.key_identifier), key);
    assert.equal(stub.requests.length, 1);
    assert.equal(stub.requests[0].accept, "application/json");
    assert.equal(stub.requests[0]["if-none-match"], undefined);
  });

  it("revalidates with If-None-Match after the TTL and keeps the keys on 304", async () => {
    const clocks = new FakeClocks();
    const keys = resolverWith(clocks);
    const key = await keys.resolve(GITHUB_SAMPLE.key_identifier);
    clocks.advance(60_000);
    assert.equal(await keys.resolve(GITHUB_SAMPLE.key_identifier), key);
    assert.equal(stub.requests.length, 2);
    assert.equal(stub.requests[1]["if-none-match"], '"v1"');
    // the 304 renewed the TTL
    clocks.advance(30_000);
    await keys.resolve(GITHUB_SAMPLE.key_identifier);
    assert.equal(stub.requests.length, 2);
  });

  it("refetches for an unknown identifier (key rotation), at most once per interval", async () => {
    const clocks = new FakeClocks();
    const keys = resolverWith(clocks);
    assert.ok(await keys.resolve(GITHUB_SAMPLE.key_identifier));
    const rotated = await createSigner("rotated-key");
    assert.equal(await keys.resolve("rotated-key"), null);
    assert.equal(stub.requests.length, 1, "within the interval of the first fetch");
    stub.keys = [SAMPLE_KEY, { key_identifier: "rotated-key", key: rotated.pem }];
    stub.etag = '"v2"';
    clocks.advance(10_000);
    const key = await keys.resolve("rotated-key");
    assert.ok(key !== null);
    assert.equal(stub.requests.length, 2);
    assert.equal(stub.requests[1]["if-none-match"], '"v1"');
    const body = new TextEncoder().encode("[]");
    assert.equal(await verifyDerSignature(key, await rotated.sign(body), body), true);
    // identifiers nobody lists cost one fetch per interval, however many are asked for
    clocks.advance(10_000);
    for (let i = 0; i < 20; i++) assert.equal(await keys.resolve(`made-up-${i}`), null);
    assert.equal(stub.requests.length, 3);
  });

  it("shares one fetch between concurrent lookups", async () => {
    const keys = resolverWith(new FakeClocks());
    const results = await Promise.all(
      Array.from({ length: 10 }, () => keys.resolve(GITHUB_SAMPLE.key_identifier)),
    );
    assert.ok(results.every((key) => key !== null && key === results[0]));
    assert.equal(stub.requests.length, 1);
  });

  it("sends the token as a Bearer header and never puts it in an error", async () => {
    const keys = resolverWith(new FakeClocks(), { token: "ghp_secret-token-value" });
    stub.status = 500;
    const error = await rejection(keys.resolve(GITHUB_SAMPLE.key_identifier));
    assert.equal(stub.requests[0].authorization, "Bearer ghp_secret-token-value");
    assert.match(String(error.message), /HTTP 500/);
    assert.doesNotMatch(
      JSON.stringify(error) + String(error.message) + String(error.stack),
      /secret-token/,
    );
  });

  it("rejects while it has no keys, serves stale keys when GitHub fails later", async () => {
    const clocks = new FakeClocks();
    const keys = resolverWith(clocks);
    stub.status = 503;
    await rejection(keys.resolve(GITHUB_SAMPLE.key_identifier));
    // within the interval: no new fetch, still not available (not "unknown key")
    await rejection(keys.resolve(GITHUB_SAMPLE.key_identifier));
    assert.equal(stub.requests.length, 1);
    stub.status = 200;
    clocks.advance(10_000);
    const key = await keys.resolve(GITHUB_SAMPLE.key_identifier);
    assert.ok(key !== null);
    stub.status = 500;
    clocks.advance(120_000);
    assert.equal(await keys.resolve(GITHUB_SAMPLE.key_identifier), key);
    assert.equal(stub.requests.length, 3);
  });

  it("rejects malformed, oversized or keyless answers", async () => {
    for (
      const body of [
        "not json",
        JSON.stringify({ keys: [] }),
        JSON.stringify({ public_keys: [{ key_identifier: 1, key: "x" }] }),
        JSON.stringify({ public_keys: [{ key_identifier: "a", key: "not a pem" }] }),
        JSON.stringify({ public_keys: Array(100).fill(SAMPLE_KEY) }),
        JSON.stringify({ public_keys: [SAMPLE_KEY], padding: "x".repeat(70_000) }),
      ]
    ) {
      const keys = resolverWith(new FakeClocks());
      stub.rawBody = body;
      const error = await rejection(keys.resolve(GITHUB_SAMPLE.key_identifier));
      assert.match(String(error.message), /^GitHub public keys: /, body.slice(0, 40));
    }
  });

  it("skips keys of another curve but keeps the P-256 ones", async () => {
    const keys = resolverWith(new FakeClocks());
    const pem = await p384PublicKeyPem();
    stub.keys = [{ key_identifier: "p384", key: pem }, SAMPLE_KEY];
    assert.ok(await keys.resolve(GITHUB_SAMPLE.key_identifier));
    assert.equal(await keys.resolve("p384"), null);
  });

  it("uses an injected fetch and gives up after timeoutMs", async () => {
    const urls: string[] = [];
    const keys = githubSecretScanningKeyResolver({
      url: "https://keys.example.test/meta",
      timeoutMs: 50,
      fetch: (url, init) => {
        urls.push(url);
        return new Promise((_, reject) =>
          init.signal?.addEventListener("abort", () => reject(new Error("aborted")))
        );
      },
    });
    const error = await rejection(keys.resolve("any"));
    assert.deepEqual(urls, ["https://keys.example.test/meta"]);
    assert.equal(error.message, "GitHub public keys: timed out");
  });

  it("returns null for identifiers that cannot be GitHub's, without fetching", async () => {
    const keys = resolverWith(new FakeClocks());
    for (const id of ["", "x".repeat(257), 7 as unknown as string]) {
      assert.equal(await keys.resolve(id), null);
    }
    assert.equal(stub.requests.length, 0);
  });

  it("refuses an http URL unless its host is loopback (a token would travel in clear)", () => {
    for (const url of ["http://api.github.com/meta", "http://127.evil.test/", "http://10.0.0.1/"]) {
      assert.throws(
        () => githubSecretScanningKeyResolver({ url }),
        /url must be an https URL \(http only to a loopback host\)/,
        url,
      );
    }
    for (
      const url of [
        "http://127.0.0.1:9/k",
        "http://127.1.2.3/k",
        "http://localhost:9/k",
        "http://[::1]:9/k",
        "https://ghe.example.test/meta",
      ]
    ) {
      githubSecretScanningKeyResolver({ url });
    }
  });

  it("trusts keys fetched before for at most maxStaleMs while the endpoint fails", async () => {
    const clocks = new FakeClocks();
    const keys = resolverWith(clocks, { maxStaleMs: 300_000 });
    const key = await keys.resolve(GITHUB_SAMPLE.key_identifier);
    assert.ok(key !== null);
    stub.status = 500;
    clocks.advance(299_000);
    assert.equal(await keys.resolve(GITHUB_SAMPLE.key_identifier), key);
    clocks.advance(1_000);
    assert.match(
      String((await rejection(keys.resolve(GITHUB_SAMPLE.key_identifier))).message),
      /GitHub public keys: HTTP 500/,
    );
    stub.status = 200;
    clocks.advance(10_000);
    assert.ok(await keys.resolve(GITHUB_SAMPLE.key_identifier) !== null);
  });

  it("bounds the trust in stale keys by default: one day", async () => {
    const clocks = new FakeClocks();
    const keys = resolverWith(clocks, { ttlMs: 3_600_000 });
    assert.ok(await keys.resolve(GITHUB_SAMPLE.key_identifier) !== null);
    stub.status = 503;
    clocks.advance(86_399_999);
    assert.ok(await keys.resolve(GITHUB_SAMPLE.key_identifier) !== null);
    clocks.advance(1);
    await rejection(keys.resolve(GITHUB_SAMPLE.key_identifier));
  });

  it("validates its options", () => {
    for (
      const options of [
        { url: "ftp://example.test/" },
        { url: "not a url" },
        { ttlMs: 0 },
        { minRefreshIntervalMs: -1 },
        { timeoutMs: 1.5 },
        { fetch: "fetch" },
        { token: 42 },
        { maxStaleMs: 0 },
        { ttlMs: 60_000, maxStaleMs: 59_999 },
      ]
    ) {
      assert.throws(
        () => githubSecretScanningKeyResolver(options as never),
        TypeError,
        JSON.stringify(options),
      );
    }
  });

  it("refuses a timeoutMs a timer cannot arm (past 2147483647 ms it would fire at once: every fetch aborted)", () => {
    for (const timeoutMs of [2 ** 31, 30 * 86_400_000]) {
      assert.throws(
        () => githubSecretScanningKeyResolver({ timeoutMs }),
        /^TypeError: GitHubSecretScanningKeyResolverOptions\.timeoutMs .*2147483647/,
      );
    }
    githubSecretScanningKeyResolver({ timeoutMs: 2 ** 31 - 1 });
  });
});
