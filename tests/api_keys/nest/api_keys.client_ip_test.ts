import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  defaultApiKeyClientIpResolver,
  trustedProxyClientIpResolver,
} from "../../../api_keys/nest/api_keys.client_ip.ts";
import { ApiKeysModule } from "../../../api_keys/nest/api_keys.module.ts";
import type { ApiKeyClientIpResolver } from "../../../api_keys/nest/api_keys.constants.ts";
import {
  appModule,
  boot,
  issue,
  moduleOptions,
  PLATFORMS,
  type TrustProxy,
  withKey,
} from "./test_app.ts";
import { spyIpParsing } from "../ip_parsing_spy.ts";

describe("defaultApiKeyClientIpResolver", () => {
  it("prefers request.ip, then the socket (also Fastify's raw socket)", () => {
    assert.equal(
      defaultApiKeyClientIpResolver({ ip: "203.0.113.7", socket: { remoteAddress: "10.0.0.1" } }),
      "203.0.113.7",
    );
    assert.equal(
      defaultApiKeyClientIpResolver({ socket: { remoteAddress: "10.0.0.1" } }),
      "10.0.0.1",
    );
    assert.equal(
      defaultApiKeyClientIpResolver({ raw: { socket: { remoteAddress: "10.0.0.2" } } }),
      "10.0.0.2",
    );
  });

  it("returns undefined when nothing is known and never reads forwarding headers", () => {
    assert.equal(defaultApiKeyClientIpResolver({}), undefined);
    assert.equal(
      defaultApiKeyClientIpResolver({
        headers: { "x-forwarded-for": "10.1.2.3", forwarded: "for=10.1.2.3" },
      }),
      undefined,
    );
  });
});

/** Trust settings that make each framework believe X-Forwarded-For from loopback. */
const TRUST: Record<string, TrustProxy> = { express: "loopback", fastify: "127.0.0.1" };

for (const platform of PLATFORMS) {
  describe(`default client IP over ${platform}`, () => {
    for (const trusted of [false, true]) {
      it(
        trusted
          ? "honours the framework's trust proxy"
          : "ignores X-Forwarded-For without trust proxy",
        async () => {
          const running = await boot(
            appModule(ApiKeysModule.forRoot(moduleOptions())),
            platform,
            trusted ? TRUST[platform] : undefined,
          );
          try {
            const forwardedNet = await issue(running.service, { allowedIpCidrs: ["10.0.0.0/8"] });
            const loopback = await issue(running.service, { allowedIpCidrs: ["127.0.0.1"] });
            const headers = { "x-forwarded-for": "10.1.2.3" };
            const viaForwarded = await running.request("/open", {
              headers: withKey(forwardedNet.key, headers),
            });
            const viaSocket = await running.request("/open", {
              headers: withKey(loopback.key, headers),
            });
            assert.equal(viaForwarded.status, trusted ? 200 : 403);
            assert.equal(viaSocket.status, trusted ? 403 : 200);
            const failed = trusted ? viaSocket : viaForwarded;
            assert.equal(failed.body.code, "api_key_ip_not_allowed");
          } finally {
            await running.close();
          }
        },
      );
    }
  });
}

/**
 * A hop count as trust setting, with one proxy on 127.0.0.1 appending the client's address.
 * Express honours it (the client is the address the proxy appended); Fastify 5 compiles a number
 * to "trust nothing", so the client is the proxy itself: pinned, so an upgrade cannot change it
 * unnoticed (docs/api-keys-nest.md "Client IP" says to list the proxies instead).
 */
for (const platform of PLATFORMS) {
  it(`hop count 1 over ${platform}: ${platform === "express" ? "the client" : "the proxy"}`, async () => {
    const running = await boot(
      appModule(ApiKeysModule.forRoot(moduleOptions())),
      platform,
      1,
    );
    try {
      const client = await issue(running.service, { allowedIpCidrs: ["203.0.113.7/32"] });
      const proxy = await issue(running.service, { allowedIpCidrs: ["127.0.0.0/8"] });
      const headers = { "x-forwarded-for": "203.0.113.7" };
      const asClient = await running.request("/open", { headers: withKey(client.key, headers) });
      const asProxy = await running.request("/open", { headers: withKey(proxy.key, headers) });
      assert.deepEqual(
        [asClient.status, asProxy.status],
        platform === "express" ? [200, 403] : [403, 200],
      );
    } finally {
      await running.close();
    }
  });
}

function requestFrom(peer: string | undefined, headers: Record<string, string | string[]> = {}) {
  return { headers, socket: { remoteAddress: peer } };
}

describe("trustedProxyClientIpResolver", () => {
  const resolve = trustedProxyClientIpResolver({ trustedProxies: ["10.0.0.0/8", "2001:db8::/32"] });

  it("returns an untrusted peer as is, ignoring its headers", () => {
    assert.equal(
      resolve(requestFrom("198.51.100.9", { "x-forwarded-for": "1.2.3.4" })),
      "198.51.100.9",
    );
  });

  it("walks X-Forwarded-For from the right, skipping trusted hops", () => {
    const request = requestFrom("10.0.0.1", {
      "x-forwarded-for": "6.6.6.6, 203.0.113.5, 10.9.9.9",
    });
    assert.equal(resolve(request), "203.0.113.5");
  });

  it("never lets a spoofed left-most value win", () => {
    const request = requestFrom("10.0.0.1", { "x-forwarded-for": "10.1.1.1, 203.0.113.5" });
    assert.equal(resolve(request), "203.0.113.5");
  });

  it("joins repeated header lines in order", () => {
    const request = requestFrom("10.0.0.1", { "x-forwarded-for": ["6.6.6.6", "203.0.113.5"] });
    assert.equal(resolve(request), "203.0.113.5");
  });

  it("accepts ports, brackets and IPv4-mapped IPv6", () => {
    assert.equal(
      resolve(requestFrom("10.0.0.1", { "x-forwarded-for": "203.0.113.5:443" })),
      "203.0.113.5",
    );
    assert.equal(
      resolve(requestFrom("10.0.0.1", { "x-forwarded-for": "[2001:db9::1]:80" })),
      "2001:db9::1",
    );
    assert.equal(
      resolve(requestFrom("::ffff:10.0.0.1", { "x-forwarded-for": "::ffff:203.0.113.5" })),
      "203.0.113.5",
    );
  });

  it("yields undefined for malformed hops or an all-trusted chain", () => {
    for (
      const value of ["not-an-ip", "203.0.113.5, junk", "1.2.3", "0x7f.0.0.1", "", "fe80::1%eth0"]
    ) {
      assert.equal(
        resolve(requestFrom("10.0.0.1", { "x-forwarded-for": value })),
        undefined,
        value,
      );
    }
    assert.equal(
      resolve(requestFrom("10.0.0.1", { "x-forwarded-for": "10.2.2.2, 2001:db8::5" })),
      undefined,
    );
    assert.equal(resolve(requestFrom("10.0.0.1")), undefined);
    assert.equal(resolve(requestFrom(undefined, { "x-forwarded-for": "203.0.113.5" })), undefined);
  });

  it("reads only the configured header, so the other one cannot be spoofed", () => {
    const request = requestFrom("10.0.0.1", {
      forwarded: "for=6.6.6.6",
      "x-forwarded-for": "203.0.113.5",
    });
    assert.equal(resolve(request), "203.0.113.5");
    const viaForwarded = trustedProxyClientIpResolver({
      trustedProxies: ["10.0.0.0/8"],
      header: "forwarded",
    });
    assert.equal(
      viaForwarded(requestFrom("10.0.0.1", { "x-forwarded-for": "6.6.6.6" })),
      undefined,
    );
  });

  it("parses RFC 7239 Forwarded elements", () => {
    const viaForwarded = trustedProxyClientIpResolver({
      trustedProxies: ["10.0.0.0/8"],
      header: "forwarded",
    });
    const request = requestFrom("10.0.0.1", {
      forwarded:
        'for=6.6.6.6;proto=https, for="[2001:db8:cafe::17]:4711";by=10.0.0.1, For="10.3.3.3"',
    });
    assert.equal(viaForwarded(request), "2001:db8:cafe::17");
    for (
      const value of [
        "for=unknown",
        "for=_hidden",
        "proto=https",
        'for="203.0.113.5',
        "by=10.0.0.1",
      ]
    ) {
      assert.equal(viaForwarded(requestFrom("10.0.0.1", { forwarded: value })), undefined, value);
    }
  });

  describe("Forwarded (RFC 7239) on the joined header value", () => {
    const viaForwarded = trustedProxyClientIpResolver({
      trustedProxies: ["10.0.0.0/8"],
      header: "forwarded",
    });
    const from = (forwarded: string | string[]) =>
      viaForwarded(requestFrom("10.0.0.1", { forwarded }));

    it("a client's unterminated quote or trailing backslash never swallows the proxy's element", () => {
      for (
        const [value, expected] of [
          ['for=198.51.100.7;x=", for=203.0.113.9', "203.0.113.9"],
          ['for=198.51.100.7;x="\\, for=203.0.113.9', "203.0.113.9"],
          ['for=198.51.100.7;x="a\\, for="[2001:db9::9]:4711"', "2001:db9::9"],
          ['for=198.51.100.7;x=", for="[2001:db9::9]"', "2001:db9::9"],
          ['for=198.51.100.7;x="a,b, for=203.0.113.9', "203.0.113.9"],
          ['for=198.51.100.7;x=", for=203.0.113.9, for=10.0.0.2', "203.0.113.9"],
          ['for="198.51.100.7\\", for=203.0.113.9;proto=https', "203.0.113.9"],
        ]
      ) {
        assert.equal(from(value), expected, value);
      }
      // The same as separate header lines (Node joins them with ", ").
      assert.equal(from(['for=198.51.100.7;x="', "for=203.0.113.9"]), "203.0.113.9");
      assert.equal(from(['for=198.51.100.7;x="\\', "for=203.0.113.9"]), "203.0.113.9");
    });

    it("keeps commas inside a well-formed quoted-string", () => {
      assert.equal(from('for=6.6.6.6;x="a,b", for=203.0.113.9'), "203.0.113.9");
      assert.equal(from('for="[2001:db9::1]";host="a,b\\"c"'), "2001:db9::1");
      assert.equal(from('for=6.6.6.6, for=203.0.113.9;x="a,\\"b,c", for=10.0.0.2'), "203.0.113.9");
    });

    it("gives undefined when the element the walk needs is malformed", () => {
      for (
        const value of [
          'for=203.0.113.9;x="',
          'for=203.0.113.9;x="\\',
          'for=203.0.113.9;x="a\\\u0001"',
          'for=203.0.113.9;x="\u0001"',
          "for=203.0.113.9;for=198.51.100.7",
          "for=203.0.113.9;FOR=198.51.100.7",
          "for=203.0.113.9 ;proto=https",
          "for=203.0.113.9; proto=https",
          "for =203.0.113.9",
          "for=",
          'for=""',
          "for=203.0.113.9=",
          'for="203.0.113.9"x',
          "for=[2001:db9::1]",
          "for=203.0.113.9, proto=https",
          "for=203.0.113.9, ",
          'for=6.6.6.6, for=203.0.113.9;x="',
        ]
      ) {
        assert.equal(from(value), undefined, value);
      }
    });

    it("ignores what lies beyond the first untrusted hop, malformed or not", () => {
      assert.equal(from('x="junk, proto=https, for=203.0.113.9'), "203.0.113.9");
      assert.equal(from("for=not-an-ip, for=203.0.113.9"), "203.0.113.9");
    });
  });

  describe("X-Forwarded-For hops", () => {
    const from = (value: string) => resolve(requestFrom("10.0.0.1", { "x-forwarded-for": value }));

    it("accepts an IP literal with the documented port forms only", () => {
      assert.equal(from("203.0.113.5:65535"), "203.0.113.5");
      assert.equal(from("[2001:db9::1]"), "2001:db9::1");
      assert.equal(from("\t203.0.113.5 "), "203.0.113.5");
      for (
        const value of [
          "203.0.113.5:",
          "203.0.113.5:123456",
          "203.0.113.5:8a",
          "[2001:db9::1]:",
          "[2001:db9::1]x",
          "[2001:db9::1",
          "[203.0.113.5:80]",
          '"203.0.113.5"',
          "203.0.113.5 80",
        ]
      ) {
        assert.equal(from(value), undefined, value);
      }
    });

    it("reads addresses with the allowlist's parser (::a.b.c.d is not IPv4)", () => {
      assert.equal(from("::1.2.3.4"), "::102:304");
      assert.equal(from("0:0:0:0:0:ffff:1.2.3.4"), "1.2.3.4");
      assert.equal(from("::ffff:010.0.0.1"), undefined);
    });
  });

  describe("oversized headers and hops", () => {
    const forwarded = trustedProxyClientIpResolver({
      trustedProxies: ["10.0.0.0/8"],
      header: "forwarded",
    });

    it("a 16 KB header or a hop over 64 characters makes the client unknown, unparsed and fast", () => {
      const cases: [ApiKeyClientIpResolver, Record<string, string>][] = [
        [resolve, { "x-forwarded-for": "203.0.113.5, ".repeat(1_260) + "203.0.113.5" }],
        [resolve, { "x-forwarded-for": "9".repeat(16_384) }],
        [resolve, { "x-forwarded-for": `[${"0:".repeat(40)}1]:80` }],
        [forwarded, { forwarded: "for=203.0.113.5, ".repeat(1_000) + "for=203.0.113.5" }],
        [forwarded, { forwarded: `for="[${"0:".repeat(40)}1]"` }],
        [forwarded, { forwarded: 'x="' + "\\,".repeat(8_000) }],
      ];
      for (const [resolver, headers] of cases) {
        const started = performance.now();
        let result: unknown;
        const calls = spyIpParsing(() => (result = resolver(requestFrom("10.0.0.1", headers))));
        const elapsed = performance.now() - started;
        const what = Object.values(headers)[0].slice(0, 40);
        assert.equal(result, undefined, what);
        assert.deepEqual(calls.filter((call) => call.longest > 64), [], what);
        assert.ok(elapsed < 1000, `${what}: ${elapsed} ms`);
      }
    });
  });

  it("rejects bad configuration at construction, naming the option", () => {
    assert.throws(() => trustedProxyClientIpResolver({ trustedProxies: [] }), /trustedProxies/);
    assert.throws(
      () => trustedProxyClientIpResolver({ trustedProxies: ["10.0.0.0/33"] }),
      /trustedProxies entry "10.0.0.0\/33"/,
    );
    assert.throws(
      // @ts-expect-error: invalid on purpose
      () => trustedProxyClientIpResolver({ trustedProxies: ["10.0.0.1"], header: "x-real-ip" }),
      /header/,
    );
  });
});

for (const platform of PLATFORMS) {
  describe(`trustedProxyClientIpResolver over ${platform}`, () => {
    it("allows the address behind the proxy and fails closed on spoofed or malformed chains", async () => {
      const clientIpResolver = trustedProxyClientIpResolver({ trustedProxies: ["127.0.0.1"] });
      const running = await boot(
        appModule(ApiKeysModule.forRoot(moduleOptions({ clientIpResolver }))),
        platform,
      );
      try {
        const office = await issue(running.service, { allowedIpCidrs: ["10.0.0.0/8"] });
        const spoofed = await issue(running.service, { allowedIpCidrs: ["6.6.6.6"] });
        const loopback = await issue(running.service, { allowedIpCidrs: ["127.0.0.1"] });
        const unrestricted = await issue(running.service);
        const chain = { "x-forwarded-for": "6.6.6.6, 10.1.2.3" };
        const status = async (key: string, headers: Record<string, string>) =>
          (await running.request("/open", { headers: withKey(key, headers) })).status;

        assert.equal(await status(office.key, chain), 200);
        assert.equal(await status(spoofed.key, chain), 403);
        assert.equal(await status(office.key, { "x-forwarded-for": "10.1.2.3, garbage" }), 403);
        assert.equal(await status(unrestricted.key, { "x-forwarded-for": "garbage" }), 200);
        // A chain of trusted hops only: the client is unknown, so an allowlisted key fails.
        assert.equal(await status(loopback.key, {}), 403);
        const denied = await running.request("/open", {
          headers: withKey(office.key, { "x-forwarded-for": "not-an-ip" }),
        });
        assert.equal(denied.body.code, "api_key_ip_not_allowed");
      } finally {
        await running.close();
      }
    });
  });
}
