/**
 * Apps compiled without `emitDecoratorMetadata` have no `design:paramtypes`.
 * This suite erases that metadata from the library's injectables (and the test
 * app's) before boot, so only explicit `@Inject` tokens can wire them.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Controller, Get, Inject, UseGuards } from "@nestjs/common";
import { APP_GUARD } from "@nestjs/core";
import { ApiKeysService } from "../../../api_keys/service.ts";
import { ApiKeysGuard, ApiKeysModule } from "../../../api_keys/nest/mod.ts";
import { appModule, boot, issue, moduleOptions, PLATFORMS, withKey } from "./test_app.ts";

const PARAMTYPES = "design:paramtypes";

@Controller("explicit")
@UseGuards(ApiKeysGuard)
class ExplicitController {
  constructor(@Inject(ApiKeysService) private readonly service: ApiKeysService) {}

  @Get()
  index() {
    return { namespace: this.service.namespace };
  }
}

/** A control case: relies on `design:paramtypes`, so erasing it must break it. */
@Controller("implicit")
class ImplicitController {
  constructor(private readonly service: ApiKeysService) {}

  @Get()
  index() {
    return { wired: this.service !== undefined };
  }
}

for (const target of [ApiKeysGuard, ExplicitController, ImplicitController]) {
  Reflect.deleteMetadata(PARAMTYPES, target);
}

describe("without decorator metadata", () => {
  it("has no design:paramtypes left on the guard", () => {
    assert.equal(Reflect.getMetadata(PARAMTYPES, ApiKeysGuard), undefined);
  });

  for (const platform of PLATFORMS) {
    it(`boots and guards routes over ${platform}`, async () => {
      const running = await boot(
        appModule(
          ApiKeysModule.forRoot(moduleOptions()),
          [ExplicitController, ImplicitController],
          [
            { provide: APP_GUARD, useExisting: ApiKeysGuard },
          ],
        ),
        platform,
      );
      try {
        assert.equal((await running.request("/explicit")).body.code, "api_key_missing");
        const { key } = await issue(running.service);
        const explicit = await running.request("/explicit", { headers: withKey(key) });
        assert.deepEqual([explicit.status, explicit.body], [200, { namespace: "ak" }]);
        const implicit = await running.request("/implicit", { headers: withKey(key) });
        assert.deepEqual([implicit.status, implicit.body], [200, { wired: false }]);
      } finally {
        await running.close();
      }
    });
  }
});
