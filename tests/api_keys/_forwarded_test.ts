/** The trusted-proxy walk shared by both bindings' client-IP resolvers. */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { clientIpBehindProxies, compileTrustedProxies } from "../../api_keys/_forwarded.ts";

describe("compileTrustedProxies", () => {
  it("normalises the ranges and defaults the header to X-Forwarded-For", () => {
    const proxies = compileTrustedProxies({ trustedProxies: ["10.0.0.1", "10.1.0.0/16"] }, "r");
    assert.deepEqual(proxies, {
      trusted: ["10.0.0.1/32", "10.1.0.0/16"],
      header: "x-forwarded-for",
    });
    assert.equal(
      compileTrustedProxies({ trustedProxies: ["::1"], header: "forwarded" }, "r").header,
      "forwarded",
    );
  });

  it("rejects an empty list, a bad entry and an unknown header, naming the resolver", () => {
    assert.throws(() => compileTrustedProxies({ trustedProxies: [] }, "who"), /^TypeError: who:/);
    assert.throws(
      () => compileTrustedProxies({ trustedProxies: ["not-an-ip"] }, "who"),
      /"not-an-ip" is not an address or CIDR/,
    );
    assert.throws(
      () =>
        compileTrustedProxies(
          { trustedProxies: ["10.0.0.1"], header: "x-real-ip" as never },
          "who",
        ),
      TypeError,
    );
  });
});

describe("clientIpBehindProxies", () => {
  const xff = compileTrustedProxies({ trustedProxies: ["10.0.0.0/8"] }, "r");
  const forwarded = compileTrustedProxies(
    { trustedProxies: ["10.0.0.0/8"], header: "forwarded" },
    "r",
  );

  it("returns the first untrusted hop from the right", () => {
    assert.equal(
      clientIpBehindProxies("10.0.0.1", "198.51.100.1, 203.0.113.7", xff),
      "203.0.113.7",
    );
    assert.equal(clientIpBehindProxies("10.0.0.1", "203.0.113.7, 10.2.3.4", xff), "203.0.113.7");
    assert.equal(clientIpBehindProxies("192.0.2.9", "203.0.113.7", xff), "192.0.2.9");
    assert.equal(
      clientIpBehindProxies("10.0.0.1", 'for=198.51.100.1, for="[2001:db8::1]:4711"', forwarded),
      "2001:db8::1",
    );
  });

  it("fails closed: no peer, a malformed hop, an all-trusted chain, an oversized header", () => {
    assert.equal(clientIpBehindProxies(undefined, "203.0.113.7", xff), undefined);
    assert.equal(clientIpBehindProxies("10.0.0.1", "203.0.113.7, garbage", xff), undefined);
    assert.equal(clientIpBehindProxies("10.0.0.1", "10.0.0.2", xff), undefined);
    assert.equal(
      clientIpBehindProxies("10.0.0.1", "203.0.113.7" + ", 10.0.0.3".repeat(1_000), xff),
      undefined,
    );
  });
});
