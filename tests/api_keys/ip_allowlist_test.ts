import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ApiKeyValidationError } from "../../api_keys/errors.ts";
import {
  isIpAllowed,
  isThenable,
  normalizeAllowedIpCidrs,
  resolveClientIp,
  trackedNetwork,
} from "../../api_keys/ip_allowlist.ts";
import { createApiKeysAdminHandler } from "../../api_keys/admin/mod.ts";
import { makeService } from "./helpers.ts";
import { spyIpParsing } from "./ip_parsing_spy.ts";
import { generateKey, LEGACY_KEY_LAYOUTS } from "../../api_keys/key_format.ts";

describe("normalizeAllowedIpCidrs", () => {
  it("writes IPv6 per RFC 5952 (no package: the bytes are rendered here)", () => {
    assert.deepEqual(
      normalizeAllowedIpCidrs([
        "2001:db8:0:0:1:0:0:1",
        "2001:0:1:1:1:1:1:1",
        "0:0:0:0:0:0:0:0",
        "1:0:0:2:0:0:0:3",
        "FE80:0000:0000:0000:0000:0000:0000:00AB",
        "0:0:0:0:0:0:1.2.3.4",
      ]),
      [
        "2001:db8::1:0:0:1/128",
        "2001:0:1:1:1:1:1:1/128",
        "::/128",
        "1:0:0:2::3/128",
        "fe80::ab/128",
        "::102:304/128",
      ],
    );
    assert.equal(isIpAllowed("2001:db8::1", ["2001:db8::/127"]), true);
    assert.equal(isIpAllowed("2001:db8::2", ["2001:db8::/127"]), false);
    assert.equal(isIpAllowed("10.0.0.1", ["::/0"]), false, "families never match");
  });

  it("canonicalises, dedupes and maps IPv4-mapped IPv6", () => {
    assert.deepEqual(
      normalizeAllowedIpCidrs([
        "10.1.2.3",
        "10.1.2.3/32",
        "192.168.7.9/16",
        "::ffff:10.0.0.0/104",
        "2001:DB8:0:0::1",
        "2001:db8::dead:beef/32",
        "0.0.0.0/0",
        "::/0",
      ]),
      [
        "10.1.2.3/32",
        "192.168.0.0/16",
        "10.0.0.0/8",
        "2001:db8::1/128",
        "2001:db8::/32",
        "0.0.0.0/0",
        "::/0",
      ],
    );
    assert.deepEqual(normalizeAllowedIpCidrs(), []);
    assert.deepEqual(normalizeAllowedIpCidrs([]), []);
  });

  it("rejects zone ids, junk and bad prefix lengths naming the entry", () => {
    for (
      const bad of [
        "fe80::1%eth0",
        "not-an-ip",
        "10.0.0.0/33",
        "::/129",
        "10.0.0.1/",
        "10.1",
        "1.2.3.4/-1",
        "1.2.3.4/8/8",
        "010.1.1.1",
      ]
    ) {
      // IP text is echoed; an entry of other characters goes by its index.
      const named = /^[0-9a-f:./]+$/.test(bad) ? JSON.stringify(bad) : "0";
      assert.throws(() => normalizeAllowedIpCidrs([bad]), (error: Error) => {
        assert.ok(error instanceof TypeError);
        assert.equal(error.message, `allowedIpCidrs entry ${named} is not an IP or CIDR`);
        return true;
      });
    }
    assert.throws(() => normalizeAllowedIpCidrs([42 as unknown as string]), TypeError);
  });

  it("echoes a refused entry only when it is IP text: a hash, letters or a long entry go by their index", () => {
    const refusal = (entry: string) => {
      try {
        normalizeAllowedIpCidrs(["10.0.0.0/8", entry]);
      } catch (error) {
        return (error as Error).message;
      }
      assert.fail("not refused");
    };
    assert.equal(refusal("10.0.0.0/33"), `allowedIpCidrs entry "10.0.0.0/33" is not an IP or CIDR`);
    assert.equal(refusal("::/129"), `allowedIpCidrs entry "::/129" is not an IP or CIDR`);
    const hash = "ab".repeat(32);
    for (
      const entry of [
        hash,
        hash.slice(0, 32),
        `${"0123456789abcdef".repeat(2)}/8`,
        "fe80::1%eth0",
        "not-an-ip",
        `${"1".repeat(50)}`,
      ]
    ) {
      assert.equal(refusal(entry), "allowedIpCidrs entry 1 is not an IP or CIDR", entry);
    }
  });

  it("never echoes an API key pasted as an entry (any namespace, a built-in legacy layout), nor does create's 400", async () => {
    const current = generateKey({ environment: "live" }).raw;
    const otherNamespace = generateKey({ environment: "test", namespace: "sk" }).raw;
    const legacy = `ak_live_${"A".repeat(12)}_${"b".repeat(32)}`; // nestarc-v0
    for (const key of [current, otherNamespace, legacy]) {
      assert.throws(() => normalizeAllowedIpCidrs(["10.0.0.0/8", ` ${key}`]), (error: Error) => {
        assert.ok(error instanceof TypeError);
        assert.ok(!error.message.includes(key.split("_")[3]), error.message);
        assert.equal(error.message, "allowedIpCidrs entry 1 is not an IP or CIDR");
        return true;
      });
    }
    const { service } = makeService();
    const scopes = [{ resource: "orders", level: "read" as const }];
    const { key } = await service.create({ tenantId: "t", name: "k", scopes });
    await assert.rejects(
      service.create({ tenantId: "t", name: "k2", scopes, allowedIpCidrs: [key] }),
      (error: ApiKeyValidationError) => {
        assert.ok(error instanceof ApiKeyValidationError);
        assert.equal(error.field, "allowedIpCidrs");
        assert.ok(!error.message.includes(key.split("_")[3]), error.message);
        assert.match(error.message, /entry 0 is not an IP or CIDR$/);
        return true;
      },
    );
  });
});

describe("normalizeAllowedIpCidrs of a service with a custom legacy layout", () => {
  it("never echoes a key of that layout pasted as an entry: create, rotate, import, the admin route", async () => {
    // nestarc-v0 with dots and a namespace of its own: no built-in layout's key.
    const layout = {
      ...LEGACY_KEY_LAYOUTS["nestarc-v0"],
      name: "shop-v1",
      separator: "." as const,
    };
    const secret = "0123456789abcdefABCDEFGHIJKLMNOP";
    const custom = `shop.live.89abcdefGHIJ.${secret}`;
    const { service } = makeService({ legacyKeyLayouts: [{ ...layout, namespace: "shop" }] });
    const scopes = [{ resource: "orders", level: "read" as const }];
    const refused = (error: ApiKeyValidationError | { message: string }) => {
      assert.ok(!error.message.includes(secret), error.message);
      assert.match(error.message, /entry 0 is not an IP or CIDR$/);
      return true;
    };
    const allowedIpCidrs = [` ${custom}`];
    await assert.rejects(
      service.create({ tenantId: "t", name: "k", scopes, allowedIpCidrs }),
      refused,
    );
    const { id } = await service.create({ tenantId: "t", name: "k", scopes });
    await assert.rejects(service.rotate(id, { allowedIpCidrs }), refused);
    const { errors } = await service.importKeys([{
      tenantId: "t",
      name: "imported",
      environment: "live",
      prefix: "abcdef01GHIJ",
      hash: "a".repeat(64),
      hashScheme: "sha256",
      pepperVersion: 0,
      scopes: ["orders:read"],
      allowedIpCidrs,
    }]);
    assert.equal(errors.length, 1);
    refused(errors[0]);
    const handle = createApiKeysAdminHandler<string>({
      service,
      scopes: ["orders:read"],
      tenantOf: () => "t",
      canManage: () => true,
      policy: () => null,
    });
    const answer = await handle({
      method: "POST",
      path: "/keys",
      query: () => null,
      headers: (name) => name === "x-requested-with" ? "api-keys-manager" : null,
      body: JSON.stringify({ name: "n", scopes: ["orders:read"], allowedIpCidrs }),
    }, "caller");
    assert.equal(answer?.status, 400);
    refused(JSON.parse(answer!.body).error);
  });
});

describe("isIpAllowed", () => {
  it("allows everything with an empty list and fails closed on unknown clients", () => {
    assert.equal(isIpAllowed(undefined, []), true);
    assert.equal(isIpAllowed(undefined, undefined), true);
    assert.equal(isIpAllowed(undefined, ["10.0.0.0/8"]), false);
    assert.equal(isIpAllowed("garbage", ["10.0.0.0/8"]), false);
    assert.equal(isIpAllowed("", ["0.0.0.0/0"]), false);
  });

  it("matches IPv4, IPv6, mapped IPv4 and /0", () => {
    const list = normalizeAllowedIpCidrs(["10.0.0.0/8", "2001:db8::/32"]);
    assert.equal(isIpAllowed("10.200.3.4", list), true);
    assert.equal(isIpAllowed("11.0.0.1", list), false);
    assert.equal(isIpAllowed("::ffff:10.1.2.3", list), true);
    assert.equal(isIpAllowed("::ffff:11.1.2.3", list), false);
    assert.equal(isIpAllowed("2001:db8:1::5", list), true);
    assert.equal(isIpAllowed("2001:db9::5", list), false);
    assert.equal(isIpAllowed("1.2.3.4", ["0.0.0.0/0"]), true);
    assert.equal(isIpAllowed("2001:db9::5", ["0.0.0.0/0"]), false);
    assert.equal(isIpAllowed("2001:db9::5", ["::/0"]), true);
    assert.equal(isIpAllowed("fe80::1%eth0", ["::/0"]), false);
  });
});

describe("trackedNetwork", () => {
  it("IPv4 (IPv4-mapped included) as the address, IPv6 as its network of the given bits", () => {
    assert.equal(trackedNetwork("198.51.100.7", 64), "198.51.100.7");
    assert.equal(trackedNetwork("::ffff:198.51.100.7", 64), "198.51.100.7");
    assert.equal(trackedNetwork("::FFFF:c633:6407", 64), "198.51.100.7");
    assert.equal(trackedNetwork("2001:db8:1:2::1", 64), "2001:db8:1:2::/64");
    assert.equal(trackedNetwork("2001:0DB8:1:2:ffff:1:2:3", 64), "2001:db8:1:2::/64");
    assert.equal(trackedNetwork("2001:db8:1:2ff::1", 56), "2001:db8:1:200::/56");
    assert.equal(trackedNetwork("2001:db8::1", 128), "2001:db8::1/128");
    assert.equal(trackedNetwork("2001:db8::1", 0), "::/0");
  });

  it("anything that is no address is undefined", () => {
    for (const text of [undefined, "", "unknown", "fe80::1%eth0", "1.2.3", "x".repeat(100)]) {
      assert.equal(trackedNetwork(text, 64), undefined, String(text));
    }
  });
});

describe("bounds on hostile allowlists and client IPs", () => {
  /** The shape that made the old IPv6 dotted-tail pattern backtrack quadratically. */
  const backtracking = (length: number) => ":" + ".".repeat(length - 2) + ":";
  const MEGABYTE = 1 << 20;

  it("accepts 100 entries of up to 64 characters and refuses more, without echoing the entry", () => {
    assert.equal(normalizeAllowedIpCidrs(Array(100).fill("10.0.0.0/8")).length, 1);
    assert.deepEqual(normalizeAllowedIpCidrs([`${" ".repeat(54)}10.0.0.0/8`]), ["10.0.0.0/8"]);
    assert.throws(() => normalizeAllowedIpCidrs(Array(101).fill("10.0.0.0/8")), (error: Error) => {
      assert.ok(error instanceof TypeError);
      assert.match(error.message, /at most 100 entries/);
      return true;
    });
    for (const long of [`${" ".repeat(55)}10.0.0.0/8`, backtracking(MEGABYTE)]) {
      assert.throws(() => normalizeAllowedIpCidrs(["10.0.0.0/8", long]), (error: Error) => {
        assert.ok(error instanceof TypeError);
        assert.match(error.message, /entry 1 is longer than 64 characters/);
        assert.ok(error.message.length < 200, "the entry is not echoed");
        return true;
      });
    }
  });

  it("create and rotate refuse them as api_key_invalid_input naming allowedIpCidrs, fast", async () => {
    const { service } = makeService();
    const scopes = [{ resource: "orders", level: "read" as const }];
    const { id } = await service.create({ tenantId: "t", name: "k", scopes });
    for (const allowedIpCidrs of [[backtracking(MEGABYTE)], Array(101).fill("10.0.0.1")]) {
      const started = performance.now();
      for (
        const attempt of [
          () => service.create({ tenantId: "t", name: "k", scopes, allowedIpCidrs }),
          () => service.rotate(id, { allowedIpCidrs }),
        ]
      ) {
        // Validation runs before the first await: the spy sees it (and fails fast if it parses).
        let pending: Promise<unknown> | undefined;
        const calls = spyIpParsing(() => (pending = attempt()));
        await assert.rejects(pending!, (error: ApiKeyValidationError) => {
          assert.ok(error instanceof ApiKeyValidationError);
          assert.equal(error.code, "api_key_invalid_input");
          assert.equal(error.field, "allowedIpCidrs");
          assert.ok(error.message.length < 200, "the entry is not echoed");
          return true;
        });
        // Scope validation may use a regex on a scope name; nothing touches the entries.
        assert.deepEqual(calls.filter((call) => call.name === "address#split"), []);
        assert.deepEqual(calls.filter((call) => call.longest > 64), []);
      }
      const elapsed = performance.now() - started;
      assert.ok(elapsed < 1000, `refused in ${elapsed} ms`);
    }
  });

  it("treats a client IP longer than 64 characters as unknown", () => {
    assert.equal(isIpAllowed(`${" ".repeat(56)}10.0.0.1`, ["0.0.0.0/0"]), true);
    assert.equal(isIpAllowed(`${" ".repeat(57)}10.0.0.1`, ["0.0.0.0/0"]), false);
    assert.equal(isIpAllowed(backtracking(MEGABYTE), ["0.0.0.0/0", "::/0"]), false);
    assert.equal(isIpAllowed(`::${"0:".repeat(40)}1`, ["::/0"]), false);
  });

  it("oversized input reaches neither the address parser nor any regular expression", () => {
    // The spy sees parsing of ordinary input, so its silence below means something.
    assert.ok(spyIpParsing(() => normalizeAllowedIpCidrs(["::ffff:10.0.0.1/104"])).length > 0);
    for (const huge of [backtracking(MEGABYTE), `${"1.".repeat(40)}1`, "9".repeat(65)]) {
      const refused = spyIpParsing(() => {
        assert.throws(() => normalizeAllowedIpCidrs([huge]), TypeError);
        assert.equal(isIpAllowed(huge, ["0.0.0.0/0", "::/0"]), false);
      });
      assert.deepEqual(refused, []);
      // A stored entry that bypassed validation: the client is parsed, the entry is not.
      const stored = spyIpParsing(() => assert.equal(isIpAllowed("10.0.0.1", [huge]), false));
      assert.deepEqual(stored.filter((call) => call.longest > 64), []);
    }
  });
});

describe("resolveClientIp", () => {
  it("answers a synchronous resolver synchronously, with its arguments", () => {
    const lines: string[] = [];
    const ip = resolveClientIp(
      (a: string, b: number) => `${a}.${b}`,
      ["203.0.113", 7],
      "x",
      (l) => lines.push(l),
    );
    assert.equal(ip, "203.0.113.7");
    assert.deepEqual(lines, []);
  });

  it("awaits an async resolver", async () => {
    const answer = resolveClientIp(() => Promise.resolve("::1"), [], "x", () => {});
    assert.ok(isThenable(answer));
    assert.equal(await answer, "::1");
  });

  it("a throw or rejection is unknown and logged by the error's name only", async () => {
    const key = generateKey({ environment: "live" }).raw;
    const lines: string[] = [];
    const log = (line: string) => lines.push(line);
    const thrown = resolveClientIp(
      () => {
        throw new RangeError(key);
      },
      [],
      "clientIpResolver",
      log,
    );
    assert.equal(thrown, undefined);
    assert.equal(
      await resolveClientIp(() => Promise.reject(new SyntaxError(key)), [], "clientIp", log),
      undefined,
    );
    assert.deepEqual(lines, [
      "api-keys: clientIpResolver failed (RangeError); client IP treated as unknown",
      "api-keys: clientIp failed (SyntaxError); client IP treated as unknown",
    ]);
  });

  it("an answer other than a string is unknown, not logged", async () => {
    const lines: string[] = [];
    const log = (line: string) => lines.push(line);
    assert.equal(resolveClientIp(() => 42, [], "x", log), undefined);
    assert.equal(resolveClientIp(() => ({ ip: "1.2.3.4" }), [], "x", log), undefined);
    assert.equal(await resolveClientIp(() => Promise.resolve(null), [], "x", log), undefined);
    assert.deepEqual(lines, []);
  });
});
