import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Inject, Injectable, Module } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import {
  API_KEYS_ENVIRONMENT_METADATA,
  API_KEYS_SCOPE_METADATA,
} from "../../../api_keys/nest/api_keys.constants.ts";
import {
  ApiKeysModule,
  type ApiKeysModuleOptions,
} from "../../../api_keys/nest/api_keys.module.ts";
import {
  API_KEYS_OPTIONS,
  ENVIRONMENT_METADATA,
  SCOPE_METADATA,
} from "../../../api_keys/nest/deprecated_names.ts";
import { RequireEnvironment, RequireScope } from "../../../api_keys/nest/api_keys.decorators.ts";
import { moduleOptions } from "./test_app.ts";

describe("deprecated names of @nestarc/api-keys", () => {
  it("SCOPE_METADATA and ENVIRONMENT_METADATA are the keys the decorators write", () => {
    assert.equal(SCOPE_METADATA, API_KEYS_SCOPE_METADATA);
    assert.equal(ENVIRONMENT_METADATA, API_KEYS_ENVIRONMENT_METADATA);
    class Routes {
      @RequireScope("orders", "write")
      @RequireEnvironment("live")
      handler() {}
    }
    const handler = Routes.prototype.handler;
    assert.ok(Reflect.getMetadata(SCOPE_METADATA, handler) !== undefined);
    assert.equal(Reflect.getMetadata(ENVIRONMENT_METADATA, handler), "live");
  });

  it("API_KEYS_OPTIONS injects the module's options anywhere in the app", async () => {
    const options = moduleOptions();
    @Injectable()
    class ReadsOptions {
      constructor(@Inject(API_KEYS_OPTIONS) readonly options: ApiKeysModuleOptions) {}
    }
    @Module({ providers: [ReadsOptions] })
    class FeatureModule {}
    @Module({ imports: [ApiKeysModule.forRoot(options), FeatureModule] })
    class AppModule {}
    const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
    try {
      assert.equal(app.get(ReadsOptions).options, options);
    } finally {
      await app.close();
    }
  });
});
