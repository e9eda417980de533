import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  ApiKeyError,
  ApiKeyOperationError,
  ApiKeyStorageError,
  ApiKeyValidationError,
} from "../../api_keys/mod.ts";
import { BadRequestException, HttpException, NotFoundException } from "@nestjs/common";
import { SafeException } from "../../safe_response/error_catalog.ts";
import { resolveError, VALIDATION_ERROR_MESSAGE } from "../../safe_response/error_resolution.ts";

/** A minimal object shaped like Nest's HttpException. */
function httpException(response: unknown, status: number) {
  return Object.assign(new Error(typeof response === "string" ? response : "Http Exception"), {
    getStatus: () => status,
    getResponse: () => response,
  });
}

describe("resolveError", () => {
  it("reads HTTP exceptions: string and object bodies, body codes, validation lists, details", () => {
    assert.deepEqual(resolveError(httpException("Nope", 404)), {
      statusCode: 404,
      code: "NOT_FOUND",
      message: "Nope",
      unexpected: false,
    });
    assert.deepEqual(
      resolveError(
        httpException(
          { statusCode: 403, code: "api_key_scope_insufficient", message: "No scope" },
          403,
        ),
      ),
      {
        statusCode: 403,
        code: "api_key_scope_insufficient",
        message: "No scope",
        unexpected: false,
      },
    );
    assert.deepEqual(resolveError(httpException({ message: ["a is bad", "b is bad"] }, 400)), {
      statusCode: 400,
      code: "BAD_REQUEST",
      message: VALIDATION_ERROR_MESSAGE,
      details: ["a is bad", "b is bad"],
      unexpected: false,
    });
    assert.deepEqual(
      resolveError(httpException({ message: "m", details: { field: "x" } }, 422)).details,
      {
        field: "x",
      },
    );
  });

  it("reads this library's coded errors (branded) and hides their 5xx messages", () => {
    const scope = new ApiKeyError("api_key_scope_insufficient");
    assert.equal(resolveError(scope).code, "api_key_scope_insufficient");
    assert.equal(resolveError(scope).statusCode, 403);
    assert.equal(resolveError(scope).message, "API key lacks the required scope");
    assert.deepEqual(
      resolveError(new ApiKeyStorageError("findByPrefix", new Error("pg: 10.0.0.3"))),
      {
        statusCode: 503,
        code: "api_key_storage_unavailable",
        message: "Service Unavailable",
        unexpected: false,
      },
    );
    const notFound = resolveError(new ApiKeyOperationError("api_key_record_not_found"));
    assert.deepEqual([notFound.statusCode, notFound.code], [404, "api_key_record_not_found"]);
    const invalid = resolveError(new ApiKeyValidationError("name", "must be a non-empty string"));
    assert.deepEqual([invalid.statusCode, invalid.message], [
      400,
      "Invalid name: must be a non-empty string",
    ]);
    // Another copy of the library: recognised by the registered symbol, not the class.
    const copy = Object.assign(new Error("not found"), {
      [Symbol.for("saferoute.api-kit.error")]: true,
      code: "api_key_record_not_found",
      status: 404,
    });
    assert.equal(resolveError(copy).statusCode, 404);
    assert.equal(resolveError(copy).message, "not found");
    const brand = Symbol.for("saferoute.api-kit.error");
    for (
      const error of [
        scope,
        new ApiKeyStorageError("x"),
        new ApiKeyOperationError("api_key_not_rotatable"),
        new ApiKeyValidationError("name", "bad"),
        new SafeException("KEY"),
      ]
    ) {
      assert.equal((error as unknown as Record<symbol, unknown>)[brand], true, error.name);
    }
  });

  it("gives a generic 500 for a { code, status } value that is not this library's error", () => {
    const shapes: unknown[] = [
      { code: "E_NOT_FOUND", status: 404, message: "row 42 of tenant_secrets" },
      Object.assign(new Error("upstream said: token abc"), { code: "E_UP", httpStatus: 403 }),
      Object.assign(new Error("P2025: record missing"), { code: "P2025", status: 404 }),
      { [Symbol.for("saferoute.api-kit.error")]: "yes", code: "X", status: 400, message: "m" },
      { getStatus: () => 404, message: "getStatus without getResponse" },
    ];
    for (const thrown of shapes) {
      assert.deepEqual(resolveError(thrown), {
        statusCode: 500,
        code: "INTERNAL_SERVER_ERROR",
        message: "Internal Server Error",
        unexpected: true,
      });
    }
  });

  it("treats anything else as an unexpected 500 with the generic title", () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const hostile = new Proxy({}, {
      get() {
        throw new Error("trap");
      },
    });
    const systemError = Object.assign(new Error("ECONNREFUSED 10.0.0.1"), { code: "ECONNREFUSED" });
    for (
      const thrown of [
        new Error("secret"),
        "secret",
        null,
        undefined,
        42,
        circular,
        hostile,
        systemError,
      ]
    ) {
      assert.deepEqual(resolveError(thrown), {
        statusCode: 500,
        code: "INTERNAL_SERVER_ERROR",
        message: "Internal Server Error",
        unexpected: true,
      });
    }
  });

  it("resolves codes in order: mapper, own code, errorCodes, default map, fallback", () => {
    const calls: unknown[] = [];
    const mapper = (_exception: unknown, context: { statusCode: number; defaultCode: string }) => {
      calls.push(context);
      return context.statusCode === 409 ? "MAPPED" : undefined;
    };
    const options = { errorCodes: { 404: "MISSING", 410: "REMOVED" }, errorCodeMapper: mapper };
    assert.equal(resolveError(httpException("x", 409), options).code, "MAPPED");
    assert.equal(resolveError(httpException("x", 404), options).code, "MISSING");
    assert.equal(resolveError(httpException("x", 400), options).code, "BAD_REQUEST");
    assert.equal(resolveError(httpException("x", 418), options).code, "I_AM_A_TEAPOT");
    assert.equal(
      resolveError(httpException({ code: "own_code", message: "x" }, 404), options).code,
      "own_code",
    );
    assert.deepEqual(calls, [
      { statusCode: 409, defaultCode: "CONFLICT" },
      { statusCode: 404, defaultCode: "MISSING" },
      { statusCode: 400, defaultCode: "BAD_REQUEST" },
      { statusCode: 418, defaultCode: "I_AM_A_TEAPOT" },
      { statusCode: 404, defaultCode: "own_code" },
    ]);
  });
});

describe("resolveError with an Error as an HTTP exception's body", () => {
  /** A database driver's error: an internal message, a foreign code, enumerable metadata. */
  class DriverError extends Error {
    code = "P2002";
    meta = { target: ["email"] };
    constructor() {
      super("Invalid `prisma.user.create()` in /srv/app/users.service.ts:42: unique (`email`)");
    }
  }

  it("reads no message, code or details from it: the status's title and code", () => {
    assert.deepEqual(resolveError(new BadRequestException(new DriverError())), {
      statusCode: 400,
      code: "BAD_REQUEST",
      message: "Bad Request",
      unexpected: false,
    });
    assert.deepEqual(resolveError(new HttpException(new DriverError(), 409)), {
      statusCode: 409,
      code: "CONFLICT",
      message: "Conflict",
      unexpected: false,
    });
    // A class instance that is not an Error is read no more than one.
    const body = Object.assign(Object.create({ message: "inherited secret" }), { code: "X1" });
    assert.deepEqual(resolveError(httpException(body, 404)), {
      statusCode: 404,
      code: "NOT_FOUND",
      message: "Not Found",
      unexpected: false,
    });
  });

  it("still takes the exception's own code", () => {
    const thrown = Object.assign(new HttpException(new DriverError(), 409), {
      code: "EMAIL_TAKEN",
    });
    assert.equal(resolveError(thrown).code, "EMAIL_TAKEN");
  });
});

describe("resolveError with a non-error status", () => {
  it("treats an HTTP exception below 400 as unexpected: a generic 500", () => {
    for (const status of [101, 200, 302]) {
      const resolved = resolveError(httpException("not an error", status));
      assert.equal(resolved.statusCode, 500);
      assert.equal(resolved.unexpected, true);
      assert.notEqual(resolved.message, "not an error");
    }
  });
});

describe("resolveError with Nest 12's errorCode", () => {
  it("takes errorCode (the option, else the body's) at the exception's own-code step", () => {
    assert.equal(
      resolveError(new BadRequestException("Email in use", { errorCode: "EMAIL_TAKEN" })).code,
      "EMAIL_TAKEN",
    );
    assert.equal(
      resolveError(new HttpException("Locked", 423, { errorCode: "ACCOUNT_LOCKED" })).code,
      "ACCOUNT_LOCKED",
    );
    assert.equal(
      resolveError(new HttpException({ message: "x", errorCode: "FROM_BODY" }, 409)).code,
      "FROM_BODY",
    );
    // The library's own `code` comes first: the exception's, then its errorCode, then the body's.
    assert.equal(
      resolveError(
        new HttpException({ message: "x", code: "BODY_CODE" }, 409, { errorCode: "OPT" }),
      )
        .code,
      "OPT",
    );
    assert.equal(
      resolveError(new HttpException({ message: "x", code: "BODY_CODE", errorCode: "E" }, 409))
        .code,
      "BODY_CODE",
    );
    // errorCodeMapper still wins, and is given the errorCode as the default code.
    const seen: string[] = [];
    const mapped = resolveError(new NotFoundException("x", { errorCode: "ITEM_GONE" }), {
      errorCodeMapper: (_exception, { defaultCode }) => {
        seen.push(defaultCode);
        return "MAPPED";
      },
    });
    assert.equal(mapped.code, "MAPPED");
    assert.deepEqual(seen, ["ITEM_GONE"]);
    // Without errorCode, Nest 12 exceptions resolve as before; an empty errorCode is ignored.
    assert.equal(resolveError(new NotFoundException("x")).code, "NOT_FOUND");
    assert.equal(resolveError(new HttpException("x", 409, { errorCode: "" })).code, "CONFLICT");
  });

  it("leaves Nest 10 and 11 exceptions (no errorCode field) as they were", () => {
    // Nest 10/11's HttpException declares no errorCode: an `errorCode` key of its body is data.
    const nest11 = httpException({ message: "x", errorCode: "NOT_A_CODE" }, 409);
    assert.equal(resolveError(nest11).code, "CONFLICT");
  });
});
