import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { SafeResponseModuleOptions } from "../../safe_response/options.ts";
import { resolveSettings } from "../../safe_response/settings.ts";

describe("option types", () => {
  it("describe what resolveSettings accepts", () => {
    const options: SafeResponseModuleOptions<{ version: string }> = {
      version: (context) => context.version,
      rateLimit: { headerPrefix: "RateLimit" },
    };
    assert.equal(resolveSettings(options).rateLimit?.headerPrefix, "RateLimit");
  });
});
