/**
 * A client-IP resolver that fails (throws, rejects with an `Error`, rejects
 * with a non-`Error`) means "client IP unknown": keys without an allowlist
 * pass, allowlisted keys fail closed, and the failure is logged, redacted.
 */
import { afterEach, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Logger } from "@nestjs/common";
import { Reflector } from "@nestjs/core";
import { ApiKeysService } from "../../../api_keys/service.ts";
import { InMemoryApiKeyStorage } from "../../../api_keys/in_memory_storage.ts";
import {
  type ApiKeyClientIpResolver,
  ApiKeyHttpException,
  ApiKeysGuard,
  type ApiKeysGuardContext,
} from "../../../api_keys/nest/mod.ts";
import { collectUnhandledRejections } from "../../reliability/harness.ts";
import { issue, PEPPER } from "./test_app.ts";

/** A guard context over a request carrying `key` in `X-API-Key`, on a route without metadata. */
function contextFor(key: string): ApiKeysGuardContext {
  const request = {
    headers: { "x-api-key": key },
    rawHeaders: ["X-API-Key", key],
    ip: "127.0.0.1",
  };
  return {
    switchToHttp: () => ({ getRequest: () => request }),
    getHandler: () => contextFor,
    getClass: () => ApiKeysGuard,
  };
}

/** Resolvers failing in each way; `leak` goes into the error so the log line must redact it. */
function failingResolvers(leak: () => string): Record<string, ApiKeyClientIpResolver> {
  const error = () => {
    const failure = new TypeError(`no address in ${leak()}`);
    failure.name = `TypeError ${leak()}`;
    return failure;
  };
  return {
    "throws": () => {
      throw error();
    },
    "rejects with an Error": () => Promise.reject(error()),
    "rejects with a non-Error": () => Promise.reject(`no address in ${leak()}`),
  };
}

describe("ApiKeysGuard with a failing client-IP resolver", () => {
  const logged: string[] = [];
  const originals = { warn: Logger.prototype.warn, error: Logger.prototype.error };
  beforeEach(() => {
    logged.length = 0;
    for (const level of ["warn", "error"] as const) {
      Logger.prototype[level] = function (message: unknown) {
        logged.push(String(message));
      };
    }
  });
  afterEach(() => {
    Logger.prototype.warn = originals.warn;
    Logger.prototype.error = originals.error;
  });

  let leaked = "";
  for (const [mode, resolver] of Object.entries(failingResolvers(() => leaked))) {
    it(`${mode}: an open key passes, an allowlisted key fails closed, one redacted log line each`, async () => {
      const rejections = collectUnhandledRejections();
      const service = new ApiKeysService({
        peppers: { 1: PEPPER },
        storage: new InMemoryApiKeyStorage(),
      });
      const guard = new ApiKeysGuard(service, new Reflector(), null, resolver);
      const open = await issue(service);
      const pinned = await issue(service, { allowedIpCidrs: ["127.0.0.0/8"] });
      leaked = open.key;

      assert.equal(await guard.canActivate(contextFor(open.key)), true);
      const error = await guard.canActivate(contextFor(pinned.key)).then(() => null, (e) => e);
      assert.ok(error instanceof ApiKeyHttpException, String(error));
      assert.equal(error.getStatus(), 403);
      assert.equal(error.code, "api_key_ip_not_allowed");
      await rejections.stop();

      assert.deepEqual(rejections.reasons, []);
      assert.equal(logged.length, 2, logged.join("\n"));
      for (const line of logged) {
        assert.match(line, /clientIpResolver/);
        assert.ok(!line.includes(open.key), `log line leaks a key: ${line}`);
      }
      // The same allowlisted key passes when the resolver works.
      const working = new ApiKeysGuard(service, new Reflector(), null, () => "127.0.0.1");
      assert.equal(await working.canActivate(contextFor(pinned.key)), true);
    });
  }
});
