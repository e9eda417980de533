/**
 * `trustedProxyClientIpResolver` under hostile forwarding headers: whatever a
 * client writes left of the element its proxy appends, the resolver returns
 * the address the proxy wrote (checked against the integer/BigInt oracle),
 * never one the client chose; oversized hops are refused unparsed; and the
 * same holds over real HTTP with repeated header lines on Express and Fastify.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { InMemoryApiKeyStorage } from "../../api_keys/mod.ts";
import { trustedProxyClientIpResolver } from "../../api_keys/nest/mod.ts";
import { spyIpParsing } from "../api_keys/ip_parsing_spy.ts";
import { PEPPER_1 } from "./harness.ts";
import { forwardingSmuggling, oversizedAddress, RUNS, SEED } from "./hostile_inputs.ts";
import {
  type Address,
  dotted,
  oracleAllows,
  type Range,
  rangeOf,
  rfc5952,
  spelledAddress,
  unmap,
} from "./ip_oracle.ts";
import { bootApp, getRequest, PLATFORMS, rawRequest, type RunningApp } from "./nest_app.ts";

const TRUSTED_TEXT = ["10.0.0.0/8", "2001:db8::/32"];
const TRUSTED: Range[] = [
  rangeOf({ family: "v4", value: 0x0a000000n }, 8)!,
  rangeOf({ family: "v6", value: 0x20010db8n << 96n }, 32)!,
];
const PROXY = "10.0.0.1";

const viaForwarded = trustedProxyClientIpResolver({
  trustedProxies: TRUSTED_TEXT,
  header: "forwarded",
});
const viaXForwardedFor = trustedProxyClientIpResolver({ trustedProxies: TRUSTED_TEXT });

function requestFrom(headers: Record<string, string | string[]>) {
  return { headers, socket: { remoteAddress: PROXY } };
}

/** The text the resolver must return for `address`. */
function canonical(address: Address): string {
  const plain = unmap(address);
  return plain.family === "v4" ? dotted(plain.value) : rfc5952(plain.value);
}

/** The element a proxy appends for a client at `text`, in one of several legal forms. */
function proxyElement(address: Address, text: string, style: number): string {
  const node = address.family === "v4"
    ? [text, `"${text}"`, `"${text}:4711"`][style % 3]
    : [`"[${text}]"`, `"[${text}]:4711"`][style % 2];
  const around = [["", ""], ["", ";proto=https"], ["by=10.0.0.1;", ""], ["", ';host="a.example"']];
  const [head, tail] = around[Math.floor(style / 6) % around.length];
  return `${head}${style % 5 === 0 ? "For" : "for"}=${node}${tail}`;
}

/** The hop a proxy appends to `X-Forwarded-For`, with or without a port. */
function proxyHop(address: Address, text: string, style: number): string {
  if (style % 2 === 0) return text;
  return address.family === "v4" ? `${text}:4711` : `[${text}]:4711`;
}

const untrustedClient = spelledAddress.filter(({ address }) => !oracleAllows(address, TRUSTED));

describe("trustedProxyClientIpResolver against client-written smuggling", () => {
  it(`Forwarded: the proxy's element wins over any client text (${RUNS} cases)`, () => {
    fc.assert(
      fc.property(
        forwardingSmuggling,
        untrustedClient,
        fc.nat(),
        fc.boolean(),
        fc.boolean(),
        (written, { address, text }, style, asLines, secondProxy) => {
          const lines = [written, proxyElement(address, text, style)];
          if (secondProxy) lines.push("for=10.0.0.2;proto=https");
          const forwarded = asLines ? lines : lines.join(", ");
          assert.equal(
            viaForwarded(requestFrom({ forwarded })),
            canonical(address),
            JSON.stringify(forwarded),
          );
        },
      ),
      { seed: SEED + 20, numRuns: RUNS },
    );
  });

  it(`X-Forwarded-For: the proxy's hop wins over any client text (${RUNS} cases)`, () => {
    fc.assert(
      fc.property(
        forwardingSmuggling,
        untrustedClient,
        fc.nat(),
        (written, { address, text }, style) => {
          const header = `${written}, ${proxyHop(address, text, style)}`;
          assert.equal(
            viaXForwardedFor(requestFrom({ "x-forwarded-for": header })),
            canonical(address),
            JSON.stringify(header),
          );
        },
      ),
      { seed: SEED + 21, numRuns: RUNS },
    );
  });

  it("an oversized hop is unknown and never parsed (1,000 inputs, up to 1 MB)", () => {
    fc.assert(
      fc.property(oversizedAddress, fc.boolean(), (text, forwarded) => {
        fc.pre(text.trim().length > 64); // padding with spaces is list syntax around a short hop
        const headers: Record<string, string> = forwarded
          ? { forwarded: `for="${text.replaceAll("\\", "\\\\")}"` }
          : { "x-forwarded-for": text };
        let result: unknown;
        const resolver = forwarded ? viaForwarded : viaXForwardedFor;
        const calls = spyIpParsing(() => (result = resolver(requestFrom(headers))));
        assert.equal(result, undefined);
        assert.deepEqual(calls.filter((call) => call.longest > 64), []);
      }),
      { seed: SEED + 22, numRuns: 1_000 },
    );
  });
});

for (const platform of PLATFORMS) {
  describe(`Forwarded smuggling over real HTTP (${platform})`, () => {
    let running: RunningApp;
    let key = "";
    before(async () => {
      running = await bootApp(platform, {
        apiKeys: {
          peppers: { 1: PEPPER_1 },
          storage: new InMemoryApiKeyStorage(),
          clientIpResolver: trustedProxyClientIpResolver({
            trustedProxies: ["127.0.0.1", "::1"],
            header: "forwarded",
          }),
        },
      });
      key = (await running.service.create({
        tenantId: "t",
        name: "office only",
        scopes: [{ resource: "orders", level: "read" }],
        allowedIpCidrs: ["198.51.100.0/24"],
      })).key;
    });
    after(() => running.close());

    /** The guarded route's status for these `Forwarded` lines, as if the last came from our proxy. */
    async function status(...lines: string[]): Promise<number> {
      const headers: [string, string][] = lines.map((line) => ["Forwarded", line]);
      const response = await rawRequest(
        running.port,
        getRequest("/keyed", [["X-API-Key", key], ...headers]),
      );
      assert.ok(response !== null, "no answer");
      return response.status;
    }

    it("the allowlisted address passes when the proxy wrote it", async () => {
      assert.equal(await status("for=198.51.100.7"), 200);
      assert.equal(await status("for=203.0.113.9", "for=198.51.100.7"), 200);
    });

    it("a client's unterminated quote or trailing backslash cannot swallow the proxy's line", async () => {
      assert.equal(await status('for=198.51.100.7;x="', "for=203.0.113.9"), 403);
      assert.equal(await status('for=198.51.100.7;x="\\', "for=203.0.113.9"), 403);
      assert.equal(await status('for=198.51.100.7;x="a\\', 'for="[2001:db9::9]:4711"'), 403);
    });

    it("a malformed element where the walk needs it fails closed", async () => {
      assert.equal(await status('for=198.51.100.7;x="'), 403);
      assert.equal(await status("for=198.51.100.7;for=198.51.100.8"), 403);
    });
  });
}
