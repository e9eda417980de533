import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  defaultFetchClientIp,
  peerAddress,
  trustedProxyClientIp,
} from "../../../api_keys/fetch/api_keys.client_ip.ts";
import { trustedProxyClientIpResolver } from "../../../api_keys/nest/api_keys.client_ip.ts";
import { forwardingSmuggling, RUNS, SEED } from "../../reliability/hostile_inputs.ts";

const denoInfo = (hostname: string) => ({ remoteAddr: { transport: "tcp", hostname, port: 1 } });
const nodeEnv = (remoteAddress: string) => ({ incoming: { socket: { remoteAddress } } });
const request = (headers: Record<string, string> = {}) =>
  new Request("http://localhost/", { headers });

describe("peerAddress and defaultFetchClientIp", () => {
  it("read Deno.serve's info and @hono/node-server's env", () => {
    assert.equal(peerAddress(denoInfo("203.0.113.7")), "203.0.113.7");
    assert.equal(peerAddress(denoInfo("::1")), "::1");
    assert.equal(peerAddress(nodeEnv("10.0.0.2")), "10.0.0.2");
    assert.equal(defaultFetchClientIp(request(), denoInfo("127.0.0.1")), "127.0.0.1");
  });

  it("are undefined without a peer and never read forwarding headers", () => {
    for (const info of [undefined, null, {}, { remoteAddr: { path: "/tmp/s" } }, 42, "x"]) {
      assert.equal(peerAddress(info), undefined);
    }
    const forwarded = request({ "x-forwarded-for": "203.0.113.7", forwarded: "for=203.0.113.7" });
    assert.equal(defaultFetchClientIp(forwarded, undefined), undefined);
    assert.equal(defaultFetchClientIp(forwarded, denoInfo("10.0.0.1")), "10.0.0.1");
  });
});

describe("trustedProxyClientIp", () => {
  it("walks X-Forwarded-For from the peer past the trusted hops", () => {
    const resolve = trustedProxyClientIp({ trustedProxies: ["10.0.0.0/8"] });
    const via = (value: string) =>
      resolve(request({ "x-forwarded-for": value }), denoInfo("10.0.0.1"));
    assert.equal(via("198.51.100.1, 203.0.113.7"), "203.0.113.7");
    assert.equal(via("203.0.113.7, 10.0.0.9"), "203.0.113.7");
    assert.equal(via("10.0.0.7, 10.0.0.9"), undefined, "trusted hops only");
    assert.equal(via("garbage"), undefined, "an unparsable hop fails closed");
    assert.equal(via(`${"1.2.3.4, ".repeat(1000)}5.6.7.8`), undefined, "over 8,192 characters");
    assert.equal(resolve(request(), denoInfo("203.0.113.9")), "203.0.113.9", "untrusted peer");
    assert.equal(resolve(request({ "x-forwarded-for": "1.2.3.4" }), undefined), undefined);
  });

  it("reads Forwarded when told to, and only that header", () => {
    const resolve = trustedProxyClientIp({ trustedProxies: ["10.0.0.0/8"], header: "forwarded" });
    const headers = {
      forwarded: 'for=198.51.100.1, for="[2001:db8::7]:4711"',
      "x-forwarded-for": "203.0.113.66",
    };
    assert.equal(resolve(request(headers), denoInfo("10.0.0.1")), "2001:db8::7");
    assert.equal(resolve(request(headers), nodeEnv("10.0.0.1")), "2001:db8::7");
  });

  it("throws at startup on bad options, naming itself", () => {
    assert.throws(
      () => trustedProxyClientIp({ trustedProxies: [] }),
      /^TypeError: trustedProxyClientIp: trustedProxies must be a non-empty array/,
    );
    assert.throws(
      () => trustedProxyClientIp({ trustedProxies: ["10.0.0.0/33"] }),
      /trustedProxyClientIp: trustedProxies entry "10.0.0.0\/33" is not an address or CIDR/,
    );
    assert.throws(
      () => trustedProxyClientIp({ trustedProxies: ["::1"], header: "x-real-ip" as "forwarded" }),
      /trustedProxyClientIp: header must be/,
    );
  });

  it("answers exactly what the Nest resolver answers for the same peer and header", () => {
    for (const header of ["x-forwarded-for", "forwarded"] as const) {
      const options = { trustedProxies: ["10.0.0.0/8", "2001:db8::/32"], header };
      const fetchResolver = trustedProxyClientIp(options);
      const nestResolver = trustedProxyClientIpResolver(options);
      fc.assert(
        fc.property(forwardingSmuggling, fc.constantFrom("10.0.0.1", "203.0.113.5"), (v, peer) => {
          let headers: Headers;
          try {
            headers = new Headers({ [header]: v });
          } catch {
            return; // not a header value Fetch can carry
          }
          const value = headers.get(header) ?? undefined;
          const nest = nestResolver({
            headers: { [header]: value },
            socket: { remoteAddress: peer },
          });
          const fetch = fetchResolver(
            new Request("http://localhost/", { headers }),
            denoInfo(peer),
          );
          assert.equal(fetch, nest, JSON.stringify(v));
        }),
        { numRuns: Math.min(RUNS, 2_000), seed: SEED },
      );
    }
  });
});
