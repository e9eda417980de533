import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { HttpException } from "@nestjs/common";
import {
  ApiKeyError,
  ApiKeyStorageError,
  generateKey,
  InMemoryApiKeyStorage,
} from "../../api_keys/mod.ts";
import { SafeException } from "../../safe_response/mod.ts";
import { CapturingLogger } from "../safe_response/nest/helpers.ts";
import { PEPPER_1 } from "./harness.ts";
import { bootApp, errorBodyProblems, PLATFORMS, type RunningApp } from "./nest_app.ts";

const SECRET = "internal-secret-5c1f-db.prod.local";
const HUGE = "x".repeat(1 << 20);

function circular(): Record<string, unknown> {
  const value: Record<string, unknown> = { message: "circular" };
  value.self = value;
  return value;
}

class DatabaseConnectionError extends Error {}

/** [name, thrower, unexpected (a non-HTTP throw whose internals must stay hidden)] */
const THROWN: [string, () => unknown, boolean][] = [
  ["number 0", () => 0, true],
  ["string", () => `boom ${SECRET}`, true],
  ["null", () => null, true],
  ["undefined", () => undefined, true],
  ["symbol", () => Symbol(SECRET), true],
  ["bigint", () => 10n, true],
  ["Error", () => new Error(SECRET), true],
  ["Error subclass", () => new DatabaseConnectionError(SECRET), true],
  ["Error with a throwing message getter", () => {
    const error = new Error("x");
    Object.defineProperty(error, "message", {
      get() {
        throw new Error(SECRET);
      },
    });
    return error;
  }, true],
  ["Proxy throwing on every trap", () =>
    new Proxy({}, {
      get() {
        throw new Error(SECRET);
      },
      has() {
        throw new Error(SECRET);
      },
      getPrototypeOf() {
        throw new Error(SECRET);
      },
      ownKeys() {
        throw new Error(SECRET);
      },
    }), true],
  ["circular object", () => ({ ...circular(), secret: SECRET }), true],
  ["Error with a 1 MB message", () => new Error(HUGE + SECRET), true],
  ["coded 5xx object", () => ({ status: 500, code: "E_DB", message: SECRET }), true],
  [
    "coded 4xx object (not this library's)",
    () => ({ status: 404, code: "E", message: SECRET }),
    true,
  ],
  [
    "coded 4xx Error (not this library's)",
    () => Object.assign(new DatabaseConnectionError(SECRET), { code: "P2025", httpStatus: 404 }),
    true,
  ],
  ["getStatus without getResponse", () => ({ getStatus: () => 400, message: SECRET }), true],
  ["ApiKeyError (branded)", () => new ApiKeyError("api_key_revoked"), false],
  ["SafeException without a catalog entry", () => new SafeException("NO_SUCH_KEY"), true],
  ["getStatus that throws", () => ({
    getStatus() {
      throw new Error(SECRET);
    },
  }), true],
  ["getStatus 999", () => ({ getStatus: () => 999, message: SECRET }), true],
  ["null-prototype object", () => Object.create(null), true],
  [
    "storage error (coded 503)",
    () => new ApiKeyStorageError("findByPrefix", new Error(SECRET)),
    true,
  ],
  ["HttpException, null body", () => new HttpException(null as unknown as string, 400), false],
  ["HttpException, number body", () => new HttpException(12345 as unknown as string, 409), false],
  ["HttpException, 1 MB body", () => new HttpException(HUGE, 400), false],
  ["HttpException, circular body", () => new HttpException(circular(), 400), false],
  ["HttpException, throwing getter body", () =>
    new HttpException({
      get message(): string {
        throw new Error(SECRET);
      },
    }, 400), false],
  [
    "HttpException, bigint details",
    () => new HttpException({ message: "m", details: 10n }, 422),
    false,
  ],
  [
    "HttpException, circular validation details",
    () => new HttpException({ message: ["a", circular()] }, 400),
    false,
  ],
  ["HttpException, array body", () => new HttpException([1, 2] as unknown as string, 400), false],
  [
    "HttpException, odd statusCode in body",
    () => new HttpException({ message: "m", statusCode: "abc" }, 400),
    false,
  ],
  ["HttpException, status 999", () => new HttpException("weird", 999), false],
  ["HttpException, status 0", () => new HttpException("weird", 0), false],
  ["HttpException, status 418.5", () => new HttpException("weird", 418.5), false],
  ["HttpException, status 101", () => new HttpException("informational", 101), true],
  ["HttpException, status 200", () => new HttpException("not an error", 200), true],
  ["HttpException, status 302", () => new HttpException("redirect", 302), true],
  ["HttpException 503", () => new HttpException("maintenance", 503), false],
];

for (const platform of PLATFORMS) {
  for (const problemDetails of [false, true]) {
    describe(`exception filter over arbitrary thrown values (${platform}, ${problemDetails ? "problem details" : "envelope"})`, () => {
      let running: RunningApp;
      before(async () => {
        running = await bootApp(platform, {
          apiKeys: { peppers: { 1: PEPPER_1 }, storage: new InMemoryApiKeyStorage() },
          safeResponse: { problemDetails },
          thrown: THROWN.map(([, thrower]) => thrower),
        });
      });
      after(() => running.close());

      THROWN.forEach(([name, , unexpected], index) => {
        it(
          `${name}: well-formed error body with an error status${
            unexpected ? ", nothing internal" : ""
          }`,
          async () => {
            const response = await fetch(`${running.url}/throw/${index}`, {
              signal: AbortSignal.timeout(10_000),
            });
            const body = await response.text();
            const contentType = response.headers.get("content-type") ?? "";
            assert.deepEqual(errorBodyProblems(response.status, contentType, body), []);
            if (unexpected || response.status >= 500) {
              assert.ok(!body.includes(SECRET), "the thrown message leaked");
              assert.ok(!body.includes("DatabaseConnectionError"), "the class name leaked");
              assert.ok(!/\bat .+:\d+:\d+/.test(body), "a stack frame leaked");
            }
            if (unexpected) assert.ok(response.status >= 500);
          },
        );
      });
    });
  }
}

for (const platform of PLATFORMS) {
  describe(`error log lines of the safe-response module redact API keys (${platform})`, () => {
    const { raw } = generateKey({ environment: "live" });
    const logger = new CapturingLogger();
    let running: RunningApp;
    before(async () => {
      running = await bootApp(platform, {
        apiKeys: { peppers: { 1: PEPPER_1 }, storage: new InMemoryApiKeyStorage() },
        safeResponse: {
          version: () => {
            throw new Error(`no version for ${raw}`);
          },
        },
        logger,
        thrown: [
          () => new Error(`lookup failed for ${raw}`),
          () => `a string with ${raw}`,
          () => ({ status: 404, code: "E", message: `an object with ${raw}` }),
        ],
      });
    });
    after(() => running.close());

    it("the thrown value's message and stack, and option failures, are logged redacted", async () => {
      for (const index of [0, 1, 2]) {
        const response = await fetch(`${running.url}/throw/${index}`);
        assert.equal(response.status, 500);
        assert.ok(!(await response.text()).includes(raw));
      }
      const errors = logger.entries.filter((entry) => entry.level === "error");
      assert.ok(errors.length >= 4, JSON.stringify(errors));
      for (const entry of errors) {
        assert.ok(!entry.message.includes(raw), `not redacted: ${entry.message.slice(0, 200)}`);
      }
      assert.equal(logger.find("error", "lookup failed for [REDACTED_API_KEY]").length, 1);
      assert.equal(logger.find("error", "a string with [REDACTED_API_KEY]").length, 1);
      assert.ok(logger.find("error", "no version for [REDACTED_API_KEY]").length >= 1);
    });
  });
}
