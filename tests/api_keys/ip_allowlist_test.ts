import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { isIpAllowed, normalizeAllowedIpCidrs } from "../../api_keys/mod.ts";

describe("normalizeAllowedIpCidrs", () => {
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
      assert.throws(() => normalizeAllowedIpCidrs([bad]), (error: Error) => {
        assert.ok(error instanceof TypeError);
        assert.ok(error.message.includes(JSON.stringify(bad)), error.message);
        return true;
      });
    }
    assert.throws(() => normalizeAllowedIpCidrs([42 as unknown as string]), TypeError);
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
