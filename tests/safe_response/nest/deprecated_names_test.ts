import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Controller, Get, Module, NotFoundException } from "@nestjs/common";
import { APP_FILTER } from "@nestjs/core";
import { SafeExceptionFilter } from "../../../safe_response/nest/deprecated_names.ts";
import * as nest from "../../../safe_response/nest/mod.ts";
import { SafeResponseFilter } from "../../../safe_response/nest/safe_response.filter.ts";
import { SafeResponseModule } from "../../../safe_response/nest/safe_response.module.ts";
import { ADAPTERS, boot, getJson } from "./helpers.ts";

@Controller("legacy")
class LegacyController {
  @Get("missing")
  missing() {
    throw new NotFoundException("No such thing");
  }
}

/** Registers the filter the way `@nestarc/safe-response` users may have: as APP_FILTER in their own module. */
@Module({
  imports: [SafeResponseModule.register({ timestamp: false })],
  controllers: [LegacyController],
  providers: [{ provide: APP_FILTER, useClass: SafeExceptionFilter }],
})
class LegacyFilterModule {}

describe("deprecated names of @nestarc/safe-response (./safe-response/nest)", () => {
  it("SafeExceptionFilter is the filter SafeResponseModule installs", () => {
    assert.equal(SafeExceptionFilter, SafeResponseFilter);
    assert.equal(nest.SafeExceptionFilter, SafeResponseFilter); // exported by the entry
    const typed: SafeExceptionFilter | undefined = undefined; // also a type
    assert.equal(typed, undefined);
  });

  it("SafeExceptionFilter is marked @deprecated with the new name", () => {
    const url = new URL("../../../safe_response/nest/deprecated_names.ts", import.meta.url);
    const source = readFileSync(url, "utf8");
    for (const kind of ["interface", "const"]) {
      assert.match(
        source,
        new RegExp(
          `@deprecated Use \`SafeResponseModule\`[^]*?\`SafeResponseFilter\`[^]*?export ${kind} SafeExceptionFilter\\b`,
        ),
      );
    }
  });

  for (const adapter of ADAPTERS) {
    it(`an app that also registers SafeExceptionFilter as its own APP_FILTER starts and answers (${adapter})`, async () => {
      const app = await boot(LegacyFilterModule, adapter);
      try {
        const { status, body } = await getJson(app.url, "/legacy/missing");
        assert.equal(status, 404);
        assert.deepEqual(body.error, { code: "NOT_FOUND", message: "No such thing" });
      } finally {
        await app.close();
      }
    });
  }
});
