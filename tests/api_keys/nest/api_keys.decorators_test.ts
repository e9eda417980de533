/** The decorators: the spec's metadata keys, argument checks, and the context as a parameter. */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ROUTE_ARGS_METADATA } from "@nestjs/common/constants.js";
import {
  CurrentApiKey,
  RateLimit,
  RequireEnvironment,
  RequireScope,
  SkipApiKey,
} from "../../../api_keys/nest/api_keys.decorators.ts";
import { ApiKeysModule } from "../../../api_keys/nest/api_keys.module.ts";
import { appModule, boot, issue, moduleOptions, PLATFORMS, withKey } from "./test_app.ts";

describe("RequireScope, RequireEnvironment and RateLimit", () => {
  it("reject bad arguments when the route is declared", () => {
    // @ts-expect-error: invalid on purpose
    assert.throws(() => RequireScope("orders", "admin"), /RequireScope: level/);
    assert.throws(() => RequireScope("", "read"), /RequireScope: resource/);
    for (const level of ["Write", undefined]) {
      assert.throws(() => RequireScope("orders", level as "read"), TypeError);
    }
    // @ts-expect-error: invalid on purpose
    assert.throws(() => RequireEnvironment("prod"), /RequireEnvironment: environment/);
  });

  it("RateLimit refuses a policy name no policy can have, or one named twice, when the route is declared", () => {
    assert.throws(() => RateLimit("Hourly"), /^TypeError: RateLimit: rateLimits: .*name must be/);
    assert.throws(() => RateLimit(""), /^TypeError: RateLimit: rateLimits: .*name must be/);
    assert.throws(
      () => RateLimit(["hourly", "hourly"]),
      /^TypeError: RateLimit: rateLimits: .*"hourly" is listed twice/,
    );
  });

  it("RequireScope refuses a second requirement on the same method or class, naming both", () => {
    class Routes {
      list() {}
    }
    const method = Object.getOwnPropertyDescriptor(Routes.prototype, "list")!;
    // Decorators apply bottom-up: the lower one first.
    RequireScope("payouts", "write")(Routes.prototype, "list", method);
    assert.throws(
      () => RequireScope("orders", "read")(Routes.prototype, "list", method),
      (error: Error) =>
        error instanceof TypeError &&
        /RequireScope\("orders", "read"\)/.test(error.message) &&
        /RequireScope\("payouts", "write"\)/.test(error.message) &&
        /one requirement/.test(error.message),
    );
    RequireScope("orders", "read")(Routes);
    assert.throws(() => RequireScope("admin", "write")(Routes), TypeError);
    // One on the class and one on a method stays the documented override (the method's wins).
    class Other {
      list() {}
    }
    const otherMethod = Object.getOwnPropertyDescriptor(Other.prototype, "list")!;
    RequireScope("orders", "read")(Other);
    RequireScope("orders", "write")(Other.prototype, "list", otherMethod);
    // A subclass may set its own class requirement.
    class Sub extends Routes {}
    RequireScope("reports", "read")(Sub);
  });
});

describe("SkipApiKey beside a requirement", () => {
  /** Each requirement decorator, as the messages name it. */
  const REQUIREMENTS: [string, () => MethodDecorator & ClassDecorator][] = [
    ["RequireScope", () => RequireScope("admin", "write")],
    ["RequireEnvironment", () => RequireEnvironment("live")],
    ["RateLimit", () => RateLimit("hourly")],
  ];
  for (const [name, requirement] of REQUIREMENTS) {
    it(`refuses SkipApiKey and ${name} on the same method or class, in either order`, () => {
      const refused = (first: string, second: string) => (error: Error) =>
        error instanceof TypeError &&
        error.message.startsWith(`${second}`) &&
        error.message.includes(`it already has ${first}`) &&
        /never be enforced/.test(error.message);
      class Routes {
        purge() {}
        wipe() {}
      }
      const purge = Object.getOwnPropertyDescriptor(Routes.prototype, "purge")!;
      requirement()(Routes.prototype, "purge", purge);
      assert.throws(
        () => SkipApiKey()(Routes.prototype, "purge", purge),
        refused(name, "SkipApiKey() on Routes.purge"),
      );
      const wipe = Object.getOwnPropertyDescriptor(Routes.prototype, "wipe")!;
      SkipApiKey()(Routes.prototype, "wipe", wipe);
      assert.throws(
        () => requirement()(Routes.prototype, "wipe", wipe),
        refused("SkipApiKey()", name),
      );
      requirement()(Routes);
      assert.throws(() => SkipApiKey()(Routes), refused(name, "SkipApiKey() on Routes"));
      @SkipApiKey()
      class Public {}
      assert.throws(() => requirement()(Public), refused("SkipApiKey()", name));
      // Apart (class and method, or a parent class and a subclass), each keeps its place.
      class Sub extends Public {}
      requirement()(Sub);
      class Keyed {
        health() {}
      }
      requirement()(Keyed);
      SkipApiKey()(
        Keyed.prototype,
        "health",
        Object.getOwnPropertyDescriptor(Keyed.prototype, "health")!,
      );
    });
  }
});

describe("decorator metadata", () => {
  it("RequireScope and RequireEnvironment write the spec's keys, on methods and classes", () => {
    class Routes {
      list() {}
    }
    const method = Object.getOwnPropertyDescriptor(Routes.prototype, "list")!;
    RequireScope("orders", "read")(Routes.prototype, "list", method);
    RequireEnvironment("live")(Routes);
    assert.deepEqual(Reflect.getMetadata("lib:api-keys:scope", method.value), {
      resource: "orders",
      level: "read",
    });
    assert.equal(Reflect.getMetadata("lib:api-keys:environment", Routes), "live");
    assert.ok(Object.isFrozen(Reflect.getMetadata("lib:api-keys:scope", method.value)));
  });

  it("CurrentApiKey is a parameter decorator", () => {
    class Routes {
      show(_apiKey: unknown) {}
    }
    CurrentApiKey()(Routes.prototype, "show", 0);
    const args = Reflect.getMetadata(ROUTE_ARGS_METADATA, Routes, "show");
    assert.equal(Object.keys(args).length, 1);
  });
});

for (const platform of PLATFORMS) {
  describe(`CurrentApiKey over ${platform}`, () => {
    it("gives the handler the context the guard verified, and nothing on a failed request", async () => {
      const running = await boot(appModule(ApiKeysModule.forRoot(moduleOptions())), platform);
      try {
        const { id, key } = await issue(running.service);
        const ok = await running.request("/open", { headers: withKey(key) });
        assert.equal((ok.body.current as { keyId: string }).keyId, id);
        const refused = await running.request("/open");
        assert.equal(refused.status, 401);
      } finally {
        await running.close();
      }
    });
  });
}
