import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ApiKeysModule, defaultApiKeyClientIpResolver } from "../../../api_keys/nest/mod.ts";
import {
  appModule,
  boot,
  issue,
  moduleOptions,
  PLATFORMS,
  type TrustProxy,
  withKey,
} from "./test_app.ts";

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
