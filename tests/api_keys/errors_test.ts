import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  API_KEY_ERROR_STATUS,
  ApiKeyAuditNotRecordedError,
  ApiKeyError,
  apiKeyError,
  type ApiKeyErrorCode,
  ApiKeyOperationError,
  ApiKeyStorageError,
  ApiKeyValidationError,
} from "../../api_keys/errors.ts";
import * as apiKeys from "../../api_keys/mod.ts";
import * as root from "../../mod.ts";

const BRAND = Symbol.for("saferoute.api-kit.error");

describe("errors", () => {
  it("ApiKeyErrorCode is also a frozen object of the codes, one member per code (0.1's names)", () => {
    for (const entry of [apiKeys, root]) {
      const codes = entry.ApiKeyErrorCode;
      assert.deepEqual({ ...codes }, {
        Missing: "api_key_missing",
        RateLimitUnavailable: "api_key_rate_limit_unavailable",
        RateLimited: "api_key_rate_limited",
        UsageExceeded: "api_key_usage_exceeded",
        Malformed: "api_key_malformed",
        Invalid: "api_key_invalid",
        Revoked: "api_key_revoked",
        Expired: "api_key_expired",
        EnvironmentMismatch: "api_key_environment_mismatch",
        ScopeInsufficient: "api_key_scope_insufficient",
        IpNotAllowed: "api_key_ip_not_allowed",
      });
      assert.ok(Object.isFrozen(codes));
      assert.deepEqual(Object.values(codes).sort(), Object.keys(API_KEY_ERROR_STATUS).sort());
    }
    const code: ApiKeyErrorCode = apiKeys.ApiKeyErrorCode.Invalid;
    assert.equal(new ApiKeyError(code).httpStatus, 401);
  });

  it("give each ApiKeyError code its status: 401 for the key, 403 for the request", () => {
    assert.deepEqual(
      Object.entries(API_KEY_ERROR_STATUS).filter(([, status]) => status === 403).map(([c]) => c),
      ["api_key_environment_mismatch", "api_key_scope_insufficient", "api_key_ip_not_allowed"],
    );
  });

  it("apiKeyError builds what new ApiKeyError builds, without a stack trace", () => {
    for (const code of Object.keys(API_KEY_ERROR_STATUS) as ApiKeyErrorCode[]) {
      for (const reason of [undefined, "a rule"]) {
        const built = apiKeyError(code, reason);
        const constructed = new ApiKeyError(code, reason);
        assert.ok(built instanceof ApiKeyError && built instanceof Error);
        assert.deepEqual(
          [built.name, built.code, built.httpStatus, built.message, built.reason],
          [
            constructed.name,
            constructed.code,
            constructed.httpStatus,
            constructed.message,
            constructed.reason,
          ],
        );
        assert.deepEqual(Object.keys(built).sort(), Object.keys(constructed).sort());
        assert.equal(JSON.stringify(built), JSON.stringify(constructed));
        assert.equal(built.stack, `ApiKeyError: ${constructed.message}`);
      }
    }
  });

  it("every error of the component carries the library's brand, code and status", () => {
    const errors = [
      apiKeyError("api_key_missing"),
      new ApiKeyOperationError("api_key_not_rotatable"),
      new ApiKeyStorageError("findById", new Error("secret cause")),
      new ApiKeyValidationError("name", "must be a non-empty string"),
    ];
    assert.deepEqual(errors.map((e) => [e.code, e.httpStatus]), [
      ["api_key_missing", 401],
      ["api_key_not_rotatable", 409],
      ["api_key_storage_unavailable", 503],
      ["api_key_invalid_input", 400],
    ]);
    for (const error of errors) {
      assert.equal((error as unknown as Record<symbol, unknown>)[BRAND], true);
    }
    assert.ok(!JSON.stringify(errors[2]).includes("secret cause"));
  });

  it("the storage and audit-not-recorded errors keep their cause off keys and JSON (pinned)", () => {
    const cause = new Error("secret cause");
    const balance = { remaining: 15, nextRefillAt: null };
    const storage = new ApiKeyStorageError("findById", cause);
    const audit = new ApiKeyAuditNotRecordedError(balance, cause);
    assert.equal(
      JSON.stringify(storage),
      '{"name":"ApiKeyStorageError","code":"api_key_storage_unavailable","httpStatus":503,' +
        '"message":"API key storage is unavailable"}',
    );
    assert.equal(
      JSON.stringify(audit),
      '{"name":"ApiKeyAuditNotRecordedError","code":"api_key_audit_not_recorded",' +
        '"httpStatus":500,"message":"The credit change was applied but its audit record was not ' +
        'written","balance":{"remaining":15,"nextRefillAt":null}}',
    );
    assert.deepEqual(Object.keys(storage), ["code", "httpStatus", "operation", "name"]);
    assert.deepEqual(Object.keys(audit), ["code", "httpStatus", "balance", "name"]);
    for (const error of [storage, audit]) {
      assert.ok(error instanceof Error);
      assert.equal(error.cause, cause);
      assert.deepEqual(Object.getOwnPropertyDescriptor(error, "cause"), {
        value: cause,
        enumerable: false,
        writable: false,
        configurable: false,
      });
      assert.equal((error as unknown as Record<symbol, unknown>)[BRAND], true);
    }
    assert.ok(
      storage instanceof ApiKeyStorageError && !(storage instanceof ApiKeyAuditNotRecordedError),
    );
    assert.ok(
      audit instanceof ApiKeyAuditNotRecordedError && !(audit instanceof ApiKeyStorageError),
    );
    assert.equal(new ApiKeyStorageError("insert").cause, undefined);
  });
});
