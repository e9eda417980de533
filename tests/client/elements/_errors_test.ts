import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { AdminApiError } from "../../../client/elements/_api.ts";
import { answerLost, deniedState, errorString } from "../../../client/elements/_errors.ts";
import { API_KEYS_MANAGER_STRINGS } from "../../../client/elements/strings.ts";

describe("client/elements/_errors.ts", () => {
  it("maps codes first, then statuses, to strings the element has", () => {
    const cases: [AdminApiError, string][] = [
      [new AdminApiError("unauthenticated", "API key is missing", 401), "errorUnauthenticated"],
      [new AdminApiError("TOKEN_ERROR", "getToken failed"), "errorUnauthenticated"],
      [new AdminApiError("forbidden", "Not allowed", 403), "errorForbidden"],
      [new AdminApiError("csrf_refused", "Cross-site", 403), "errorCsrf"],
      [new AdminApiError("NETWORK_ERROR", "network error"), "errorNetwork"],
      [new AdminApiError("HTTP_502", "HTTP 502", 502), "errorServer"],
      [new AdminApiError("api_key_escalation_refused", "x", 403), "errorEscalation"],
      [new AdminApiError("api_key_not_rotatable", "x", 409), "errorNotRotatable"],
      [new AdminApiError("api_key_name_changed", "x", 409), "renameConflict"],
      [new AdminApiError("whatever", "x", 429), "errorRateLimited"],
      [new AdminApiError("whatever", "x", 429, 30), "errorRetryAfter"],
      [new AdminApiError("not_implemented", "no audit log", 501), "errorUnavailable"],
      [new AdminApiError("HTTP_501", "HTTP 501", 501), "errorUnavailable"],
      [new AdminApiError("whatever", "x", 418), "error"],
    ];
    for (const [error, expected] of cases) {
      assert.equal(errorString(error), expected, error.code);
      assert.ok(errorString(error) in API_KEYS_MANAGER_STRINGS);
    }
  });

  it("a code named like an Object.prototype property is an unknown code (the status decides)", () => {
    for (const code of ["constructor", "toString", "hasOwnProperty", "__proto__", "valueOf"]) {
      assert.equal(errorString(new AdminApiError(code, "x", 400)), "errorInvalid", code);
      assert.equal(errorString(new AdminApiError(code, "x", 503)), "errorServer", code);
    }
  });

  it("401 signs out, 403 shuts out, a CSRF refusal does neither", () => {
    assert.equal(deniedState(new AdminApiError("unauthenticated", "", 401)), "signed-out");
    assert.equal(deniedState(new AdminApiError("forbidden", "", 403)), "forbidden");
    assert.equal(deniedState(new AdminApiError("csrf_refused", "", 403)), null);
    assert.equal(deniedState(new AdminApiError("HTTP_502", "", 502)), null);
  });

  it("an answer lost (network failure, timeout, unreadable, a gateway's) may hide a request carried out", () => {
    assert.equal(answerLost(new AdminApiError("NETWORK_ERROR", "network error")), true);
    assert.equal(answerLost(new AdminApiError("BAD_RESPONSE", "unreadable response")), true);
    assert.equal(answerLost(new AdminApiError("TOKEN_ERROR", "getToken failed")), false);
    assert.equal(answerLost(new Error("x")), false);
    // A gateway's 502, 503 or 504, its own page or an envelope: the upstream may have acted.
    for (const status of [502, 503, 504]) {
      assert.equal(answerLost(new AdminApiError(`HTTP_${status}`, "", status)), true, `${status}`);
    }
    assert.equal(answerLost(new AdminApiError("api_key_storage_unavailable", "x", 503)), true);
    // Another 5xx not from the admin routes (a body naming no code: a proxy's page).
    assert.equal(answerLost(new AdminApiError("HTTP_500", "HTTP 500", 500)), true);
    assert.equal(answerLost(new AdminApiError("HTTP_501", "HTTP 501", 501)), true);
    // The admin routes' own answers: the request was refused, nothing done.
    assert.equal(answerLost(new AdminApiError("internal_error", "Internal error", 500)), false);
    assert.equal(answerLost(new AdminApiError("not_implemented", "x", 501)), false);
    assert.equal(answerLost(new AdminApiError("HTTP_418", "HTTP 418", 418)), false);
    assert.equal(answerLost(new AdminApiError("api_key_invalid_input", "x", 400)), false);
  });
});
