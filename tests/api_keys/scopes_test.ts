import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { flattenScopes, scopeSatisfies } from "../../api_keys/scopes.ts";
import { ApiKeyError, ApiKeyValidationError } from "../../api_keys/mod.ts";
import { makeService, rejection } from "./helpers.ts";
import { generateKey } from "../../api_keys/key_format.ts";

describe("scopes", () => {
  it("flattens to resource:level, deduped in first-seen order", () => {
    assert.deepEqual(
      flattenScopes([
        { resource: "orders", level: "write" },
        { resource: "a.b-c_1", level: "read" },
        { resource: "orders", level: "write" },
      ]),
      ["orders:write", "a.b-c_1:read"],
    );
  });

  it("accepts resources of [A-Za-z0-9._/-]: @nestarc/api-keys' own, capitals and '/' included", () => {
    const resources = [
      "Orders",
      "billing/invoices",
      "v2.Reports-x_1",
      "_private",
      ".hidden",
      "-dash",
      "a/b/c",
      "ABC-123",
    ];
    assert.deepEqual(
      flattenScopes(resources.map((resource) => ({ resource, level: "read" }))),
      resources.map((resource) => `${resource}:read`),
    );
  });

  it("rejects bad resources and levels with a TypeError", () => {
    const bad = [
      "",
      "or:ders",
      "Orders:",
      "ä",
      "a b",
      " orders",
      "orders ",
      "a\tb",
      "a\nb",
      "a\u0000b",
      "a\u007fb",
      "a\u00a0b",
      "a@b",
      "a+b",
      "a\\b",
      "a*",
      "a,b",
      "R".repeat(129),
    ];
    for (const resource of bad) {
      assert.throws(
        () => flattenScopes([{ resource, level: "read" }]),
        /scopes\[0\]\.resource must be 1-128 characters of \[A-Za-z0-9._\/-\]/,
        JSON.stringify(resource),
      );
    }
    assert.throws(() => flattenScopes([{ resource: "a", level: "admin" as "read" }]), /level/);
  });

  it("never echoes a pasted key, a secret or a huge value in the error", () => {
    const key = `ak_live_RxW362tsMpEt_${"ZAdubzpYrcSIlbc3MgEzr14jQ3xJE4e50Er3St"}`;
    // A key is of the resource alphabet: pasted with its line's end, or beside a space.
    const cases: [string, string][] = [
      [`${key}\n`, "read"],
      ["orders", key.slice(0, 32)],
      ["x".repeat(200_000), "read"],
      [`orders ${"ZAdubzpYrcSIlbc3"}`, "read"],
    ];
    for (const [resource, level] of cases) {
      let message = "";
      try {
        flattenScopes([{ resource: "ok", level: "read" }, { resource, level: level as "read" }]);
      } catch (error) {
        message = String((error as Error).message);
      }
      assert.match(message, /scopes\[1\]/, "the entry is named by its index");
      assert.ok(!message.includes("ZAdubzpYrcS") && !message.includes("RxW362"), message);
      assert.ok(message.length < 200, `${message.length} characters`);
    }
    assert.throws(
      () => flattenScopes([{ resource: "a", level: "Read" as "read" }]),
      /scopes\[0\]\.level "Read" must be "read" or "write"/,
      "a word is shown",
    );
  });

  it("refuses an API key as a resource (a key pasted in the scope field would be stored and listed in plain text), never echoing it", () => {
    for (const environment of ["live", "test"] as const) {
      const { raw } = generateKey({ environment });
      assert.throws(
        () => flattenScopes([{ resource: raw, level: "read" }]),
        (error: Error) =>
          error instanceof TypeError && /scopes\[0\]\.resource must not be an API key/.test(
            error.message,
          ) && !error.message.includes(raw.slice(8, 20)),
      );
      // A near miss (its checksum broken) is a resource like any other.
      const broken = raw.slice(0, -1) + (raw.endsWith("A") ? "B" : "A");
      assert.deepEqual(flattenScopes([{ resource: broken, level: "read" }]), [`${broken}:read`]);
    }
  });

  it("seed 0.4: a resource is 1 to 128 characters", () => {
    const longest = "Aa0._/-".repeat(18).slice(0, 128);
    assert.deepEqual(flattenScopes([{ resource: longest, level: "read" }]), [`${longest}:read`]);
    assert.throws(
      () => flattenScopes([{ resource: "r".repeat(129), level: "read" }]),
      /scopes\[0\]\.resource must be 1-128 characters of \[A-Za-z0-9._\/-\]/,
    );
  });

  it("write implies read; resources match exactly", () => {
    assert.equal(scopeSatisfies(["orders:write"], "orders", "read"), true);
    assert.equal(scopeSatisfies(["orders:write"], "orders", "write"), true);
    assert.equal(scopeSatisfies(["orders:read"], "orders", "read"), true);
    assert.equal(scopeSatisfies(["orders:read"], "orders", "write"), false);
    assert.equal(scopeSatisfies(["orders:write"], "order", "read"), false);
    assert.equal(scopeSatisfies(["orders.items:write"], "orders", "read"), false);
    assert.equal(scopeSatisfies([], "orders", "read"), false);
  });

  it("resources with capitals and '/' match exactly: case-sensitive, no hierarchy", () => {
    const granted = ["Orders:read", "billing/invoices:write", "v2.Reports-x_1:read"];
    assert.equal(scopeSatisfies(granted, "Orders", "read"), true);
    assert.equal(scopeSatisfies(granted, "orders", "read"), false);
    assert.equal(scopeSatisfies(granted, "ORDERS", "read"), false);
    assert.equal(scopeSatisfies(granted, "Orders", "write"), false);
    assert.equal(scopeSatisfies(granted, "billing/invoices", "read"), true);
    assert.equal(scopeSatisfies(granted, "billing/invoices", "write"), true);
    assert.equal(scopeSatisfies(granted, "billing", "read"), false);
    assert.equal(scopeSatisfies(granted, "billing/invoices/2024", "read"), false);
    assert.equal(scopeSatisfies(granted, "Billing/Invoices", "read"), false);
    assert.equal(scopeSatisfies(granted, "v2.Reports-x_1", "read"), true);
    assert.equal(scopeSatisfies(granted, "v2.reports-x_1", "read"), false);
  });

  it("throws a TypeError for an unknown required level instead of granting anything", () => {
    for (const level of ["Write", "admin", "READ", "", undefined, null, 1]) {
      assert.throws(
        () => scopeSatisfies(["orders:write", "orders:read"], "orders", level as "read"),
        (error) => error instanceof TypeError && /level/.test(error.message),
        String(level),
      );
    }
  });
});

describe("scope resources through create and authorize", () => {
  it("a key made with capitals and '/' in its resources authorizes exactly those, case-sensitively", async () => {
    const { service } = makeService({ cache: false });
    const { key } = await service.create({
      tenantId: "t",
      name: "migrated",
      scopes: [
        { resource: "Orders", level: "read" },
        { resource: "billing/invoices", level: "write" },
        { resource: "v2.Reports-x_1", level: "read" },
      ],
    });
    assert.deepEqual((await service.verify(key)).scopes, [
      "Orders:read",
      "billing/invoices:write",
      "v2.Reports-x_1:read",
    ]);
    for (
      const [resource, level] of [
        ["Orders", "read"],
        ["billing/invoices", "read"],
        ["billing/invoices", "write"],
        ["v2.Reports-x_1", "read"],
      ] as const
    ) {
      const context = await service.authorize(key, { requiredScope: { resource, level } });
      assert.equal(context.tenantId, "t", `${resource}:${level}`);
    }
    for (
      const [resource, level] of [
        ["orders", "read"],
        ["Orders", "write"],
        ["billing", "read"],
        ["Billing/invoices", "read"],
        ["v2.reports-x_1", "read"],
      ] as const
    ) {
      const error = await rejection(service.authorize(key, { requiredScope: { resource, level } }));
      assert.ok(error instanceof ApiKeyError, `${resource}:${level}`);
      assert.equal(error.code, "api_key_scope_insufficient", `${resource}:${level}`);
    }
  });

  it("create still refuses an empty, too long, ':' or whitespace resource, naming the entry", async () => {
    const { service } = makeService({ cache: false });
    for (const resource of ["", "R".repeat(129), "a:b", "a b", "a\tb", "billing\\invoices"]) {
      const error = await rejection(
        service.create({ tenantId: "t", name: "n", scopes: [{ resource, level: "read" }] }),
      );
      assert.ok(error instanceof ApiKeyValidationError, JSON.stringify(resource));
      assert.equal(error.field, "scopes");
      assert.match(String(error.message), /scopes\[0\]\.resource must be 1-128 characters/);
    }
  });
});
