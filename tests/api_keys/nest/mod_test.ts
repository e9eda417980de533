import { describe, it } from "node:test";
import assert from "node:assert/strict";
import * as nest from "../../../api_keys/nest/mod.ts";
import { loadedAtImport, WITH_DENO_INFO } from "../../module_graph.ts";

/**
 * The most library files `./api-keys/nest` may load at import: 42 (41 before the refusal of
 * unknown option names moved to telemetry/_known_fields.ts, its one home shared with the
 * rate-limits core; 40 before the route
 * requirements the guard reads moved to api_keys/nest/_route_requirements.ts, their one home
 * shared with the module's start-up check of routes no guard covers; 39 before the longest timer delay
 * moved to telemetry/_timer.ts, its one home shared with the rate-limits core and the leak intake;
 * 38 before the IETF rate-limit
 * field names moved to api_keys/metering/_rate_limit_fields.ts, a leaf `./safe-response/openapi`
 * documents the guard's 429 from; 37 before the lone-surrogate rule
 * of stored text moved to telemetry/_text.ts, a leaf shared with the rate-limits core; 36 before the detached call of a
 * caller's function moved to telemetry/_detached.ts, a leaf shared with the rate-limits core; 35
 * before the name reader of
 * thrown values moved to telemetry/_error_name.ts, one home for both cores' log lines; 38 while
 * the checks of storage answers, of create/rotate inputs and the migration hint loaded at import;
 * 43 while the usage recorder, feed follower, audit log and credit book loaded with the service; 55
 * when api_keys imported the rate-limits barrel; 51 before issue 41), and no package but Nest's
 * (8 files of `ipaddr.js` and `@noble/hashes` before). No slack: a file more is a choice to make
 * here. This is the static graph (ESM, Deno); the CommonJS build requires the package's own files
 * on first use and runs at most 12 at `require` (tests/scripts/npm_build/lazy_requires_test.ts).
 */
const MAX_FILES_AT_IMPORT = 42;

/**
 * Files loaded on use only (by the service's flows, `notifyExpiring`, `listPage`, and the parts
 * of the options `usage`, `feed`, `audit`, of credits and the checks of storage answers, loaded
 * once a service is built).
 */
const LOADED_ON_USE = [
  "api_keys/metering/_usage.ts",
  "api_keys/verify/_fleet.ts",
  "api_keys/audit/_log.ts",
  "api_keys/audit/chain.ts",
  "api_keys/metering/_credits.ts",
  "api_keys/_import.ts",
  "api_keys/verify/_verify.ts",
  "api_keys/_manage.ts",
  "api_keys/_expiry.ts",
  "api_keys/_uuid_v7.ts",
  "api_keys/storage/_paging.ts",
  "api_keys/storage/_answers.ts",
  "api_keys/storage/_migrations.ts",
  "api_keys/_key_input.ts",
];

describe("api_keys/nest/mod.ts", () => {
  it("exports the binding's public runtime names and the deprecated @nestarc aliases", () => {
    assert.deepEqual(Object.keys(nest).sort(), [
      "API_KEYS_CLIENT_IP_RESOLVER",
      "API_KEYS_CONTEXT_WRITER",
      "API_KEYS_ENVIRONMENT_METADATA",
      "API_KEYS_OPTIONS",
      "API_KEYS_RATE_LIMIT_METADATA", // deprecated alias of the options token (docs/migration.md)
      "API_KEYS_SCOPE_METADATA",
      "API_KEY_CONTEXT_PROPERTY",
      "ApiKeyHttpException",
      "ApiKeysGuard",
      "ApiKeysModule",
      "ApiKeysThrottlerTracker",
      "CurrentApiKey",
      "ENVIRONMENT_METADATA",
      "RateLimit", // deprecated
      "RequireEnvironment",
      "RequireScope",
      "SCOPE_METADATA", // deprecated
      "SkipApiKey",
      "defaultApiKeyClientIpResolver",
      "getApiKeyContext",
      "trustedProxyClientIpResolver",
    ]);
  });

  it(
    "loads neither the admin, leak, key-import, the service's flows, the rate limiter nor a package but Nest's at import, in a bounded number of files",
    WITH_DENO_INFO,
    async () => {
      const { files, packages } = await loadedAtImport(
        new URL("../../../api_keys/nest/mod.ts", import.meta.url).href,
      );
      // No package of the library's own (ipaddr.js was one, @noble/hashes loads on first need).
      assert.deepEqual(packages, ["@nestjs/common", "@nestjs/core"]);
      for (const file of files) {
        assert.doesNotMatch(
          file,
          /^api_keys\/(admin|leaks)\/|\/api_keys\.(admin|leaks)\.ts$/,
          file,
        );
        assert.ok(!LOADED_ON_USE.includes(file), file);
        // The limiter, stores and throttler load with the app's own `./rate-limits` import.
        assert.doesNotMatch(
          file,
          /^rate_limits\/(mod|limiter|memory_store|throttler|_door|_watchdog|_window)\.ts$/,
          file,
        );
      }
      assert.ok(
        files.length <= MAX_FILES_AT_IMPORT,
        `${files.length} files at import (at most ${MAX_FILES_AT_IMPORT}):\n${
          files.sort().join("\n")
        }`,
      );
    },
  );
});
