/** Validation of `create`, `rotate` and `list` inputs: each refusal names its field. */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ApiKeyValidationError } from "../../api_keys/errors.ts";
import { MAX_API_KEY_INSTANT_MS } from "../../api_keys/_input.ts";
import {
  validateCreateInput,
  validateListOptions,
  validateRotateInput,
} from "../../api_keys/_key_input.ts";

const SCOPES = [{ resource: "orders", level: "read" as const }];

/** The `ApiKeyValidationError` thrown by `run`. */
function refusal(run: () => unknown): ApiKeyValidationError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof ApiKeyValidationError);
    return error;
  }
  throw new Error("expected an ApiKeyValidationError");
}

const field = (run: () => unknown): string => refusal(run).field;
const codeOf = (run: () => unknown): string => refusal(run).code;

describe("seed 0.4: bad dates and durations are api_key_invalid_time", () => {
  it("answers api_key_invalid_time for a bad expiresAt, gracePeriodMs or maxWaitMs, and api_key_invalid_input for the rest", () => {
    const base = { tenantId: "t", name: "n", scopes: SCOPES };
    const now = new Date("2030-01-01T00:00:00.000Z");
    for (const expiresAt of [new Date(NaN), new Date(MAX_API_KEY_INSTANT_MS + 1), "2031-01-01"]) {
      assert.equal(
        codeOf(() => validateCreateInput({ ...base, expiresAt } as never)),
        "api_key_invalid_time",
      );
    }
    for (const gracePeriodMs of [-1, NaN, Infinity, "60000", 1e16, 1000.5]) {
      assert.equal(
        codeOf(() => validateRotateInput({ gracePeriodMs } as never, now)),
        "api_key_invalid_time",
      );
    }
    for (const maxWaitMs of [-1, 0.5]) {
      assert.equal(
        codeOf(() => validateRotateInput({ graceStarts: "first-use", maxWaitMs }, now)),
        "api_key_invalid_time",
        `maxWaitMs ${maxWaitMs}: whole milliseconds (a BIGINT column on Prisma)`,
      );
    }
    assert.equal(codeOf(() => validateCreateInput({ ...base, name: "" })), "api_key_invalid_input");
    // A name's 200 are code points, as the OpenAPI document's maxLength counts them.
    const emoji = "\u{1F511}".repeat(200);
    assert.equal(validateCreateInput({ ...base, name: emoji }).name, emoji);
    assert.equal(validateRotateInput({ name: emoji }, now).name, emoji);
    assert.equal(
      codeOf(() => validateCreateInput({ ...base, name: `${emoji}x` })),
      "api_key_invalid_input",
    );
    assert.equal(
      codeOf(() => validateRotateInput({ maxWaitMs: 1000 }, now)),
      "api_key_invalid_input",
      "maxWaitMs without first-use is a wrong combination, not a bad duration",
    );
    assert.equal(new ApiKeyValidationError("x", "y").code, "api_key_invalid_input");
    assert.equal(
      new ApiKeyValidationError("x", "y", "api_key_invalid_time").code,
      "api_key_invalid_time",
    );
  });
});

describe("seed 0.4: tenant ids are bounded at create", () => {
  it("refuses a tenant id with surrounding whitespace or over 255 UTF-16 units, naming tenantId", () => {
    const base = { name: "n", scopes: SCOPES };
    for (const tenantId of [" t1 ", "t1 ", "\tt1", "t".repeat(256), "😀".repeat(128), ""]) {
      assert.equal(field(() => validateCreateInput({ ...base, tenantId })), "tenantId", tenantId);
    }
    for (const tenantId of ["t", "t".repeat(255), "a b", "😀".repeat(127)]) {
      assert.equal(validateCreateInput({ ...base, tenantId }).tenantId, tenantId);
    }
  });

  it("refuses a tenant id with a lone surrogate (UTF-8 would make it U+FFFD: two tenants, one audit chain text)", () => {
    const base = { name: "n", scopes: SCOPES };
    for (const tenantId of ["t\uD800", "t\uDC00", "\uDC00\uD83D", "\uD83Dt", "t\uDE00\uD83D"]) {
      assert.equal(field(() => validateCreateInput({ ...base, tenantId })), "tenantId", tenantId);
    }
    for (const tenantId of ["t\uD83D\uDE00", "\uFFFD", "t\u00e9"]) {
      assert.equal(validateCreateInput({ ...base, tenantId }).tenantId, tenantId);
    }
  });
});

describe("tenant ids and createdBy are printable text the storage holds", () => {
  const base = { tenantId: "t", name: "n", scopes: SCOPES };

  it("refuses a tenant id with U+0000, a control character, a line separator or a bidi control, naming tenantId", () => {
    for (
      const tenantId of ["t\u0000", "t\n1", "t\r1", "t\u00851", "t\u20281", "t\u202e1", "t\ufeff1"]
    ) {
      assert.equal(field(() => validateCreateInput({ ...base, tenantId })), "tenantId", tenantId);
      assert.equal(
        codeOf(() => validateCreateInput({ ...base, tenantId })),
        "api_key_invalid_input",
      );
    }
  });

  it("refuses a createdBy with U+0000, a control character or a bidi control, at create and rotate", () => {
    const now = new Date(0);
    for (
      const createdBy of [
        "a\u0000b",
        "alice\nFAKE api_key.revoked",
        "a\tb",
        "a\u2029b",
        "a\u202eb",
        "a\ud800",
      ]
    ) {
      assert.equal(
        field(() => validateCreateInput({ ...base, createdBy })),
        "createdBy",
        createdBy,
      );
      assert.equal(field(() => validateRotateInput({ createdBy }, now)), "createdBy", createdBy);
    }
  });

  it("bounds createdBy at 200 characters (MAX_ACTOR_LENGTH, as the admin routes' actorOf)", () => {
    const now = new Date(0);
    for (const createdBy of ["x".repeat(201), "x".repeat(1_000_000), " "]) {
      assert.equal(field(() => validateCreateInput({ ...base, createdBy })), "createdBy");
      assert.equal(field(() => validateRotateInput({ createdBy }, now)), "createdBy");
    }
    for (const createdBy of ["x".repeat(200), "alice@example.com", "Zoë 👩\u200d💻"]) {
      assert.equal(validateCreateInput({ ...base, createdBy }).createdBy, createdBy);
      assert.equal(validateRotateInput({ createdBy }, now).createdBy, createdBy);
    }
  });
});

describe("create, rotate and list inputs", () => {
  it("a create input: scopes flattened, allowlist canonical, environment live by default", () => {
    const valid = validateCreateInput({
      tenantId: "t",
      name: "n",
      scopes: [...SCOPES, ...SCOPES],
      allowedIpCidrs: ["10.1.2.3"],
    });
    assert.deepEqual(valid, {
      tenantId: "t",
      name: "n",
      scopes: ["orders:read"],
      environment: "live",
      expiresAt: undefined,
      createdBy: null,
      allowedIpCidrs: ["10.1.2.3/32"],
      rateLimits: undefined,
      limitsOf: undefined,
    });
  });

  it("names the field of each bad input", () => {
    const base = { tenantId: "t", name: "n", scopes: SCOPES };
    assert.equal(field(() => validateCreateInput({ ...base, tenantId: " " })), "tenantId");
    assert.equal(field(() => validateCreateInput({ ...base, scopes: [] })), "scopes");
    assert.equal(
      field(() => validateCreateInput({ ...base, allowedIpCidrs: ["x"] })),
      "allowedIpCidrs",
    );
    assert.equal(field(() => validateCreateInput(null as never)), "input");
    const now = new Date(0);
    assert.equal(field(() => validateRotateInput({ gracePeriodMs: -1 }, now)), "gracePeriodMs");
    assert.equal(field(() => validateRotateInput({ name: "" }, now)), "name");
    // A control character: no text field holds a line break (the page's revoke asks it typed).
    assert.equal(field(() => validateCreateInput({ ...base, name: "prod\nbilling" })), "name");
    assert.equal(field(() => validateRotateInput({ name: "a\rb" }, now)), "name");
    assert.equal(field(() => validateRotateInput({ name: "a\u0085b" }, now)), "name");
    assert.equal(
      field(() => validateListOptions({ includeRevoked: "yes" as never })),
      "includeRevoked",
    );
  });

  it("a rotate input inherits what it omits; list options default to active keys", () => {
    assert.deepEqual(validateRotateInput(undefined, new Date(0)), {
      gracePeriodMs: 86_400_000,
      graceStarts: "rotation",
      maxWaitMs: 0,
      name: undefined,
      createdBy: undefined,
      expiresAt: undefined,
      allowedIpCidrs: undefined,
      rateLimits: undefined,
    });
    assert.equal(validateListOptions(undefined), false);
    assert.equal(validateListOptions({ includeRevoked: true }), true);
  });
});

describe("unknown fields of create and rotate inputs are refused, never dropped", () => {
  const base = { tenantId: "t", name: "n", scopes: SCOPES };
  const now = new Date(0);

  it("create: a misspelt field (allowedIps, expiresIn) is api_key_invalid_input on input, naming it and the known fields", () => {
    const error = refusal(() =>
      validateCreateInput({ ...base, allowedIps: ["10.0.0.0/8"], expiresIn: 60_000 } as never)
    );
    assert.equal(error.field, "input");
    assert.equal(error.code, "api_key_invalid_input");
    assert.match(
      error.message,
      /unknown fields: allowedIps, expiresIn \(known: tenantId, .*allowedIpCidrs/,
    );
  });

  it("an array is not an input: create and rotate refuse one as not an object, not by its indexes", () => {
    for (const input of [[], ["a", "b"]]) {
      for (
        const run of [
          () => validateCreateInput(input as never),
          () => validateRotateInput(input as never, now),
        ]
      ) {
        const error = refusal(run);
        assert.equal(error.field, "input");
        assert.match(error.message, /^Invalid input: must be an object$/);
      }
    }
  });

  it("rotate: a misspelt field (gracePeriod) is refused, naming it", () => {
    const error = refusal(() => validateRotateInput({ gracePeriod: 60_000 } as never, now));
    assert.equal(error.field, "input");
    assert.match(error.message, /unknown fields: gracePeriod \(known: gracePeriodMs, /);
  });

  it("a policy's misspelt field (sharedby) is a TypeError naming the policy and the field, at create and rotate", () => {
    const rateLimits = [{ name: "day", limit: 2, windowMs: 60_000, sharedby: "tenant" }];
    for (
      const run of [
        () => validateCreateInput({ ...base, rateLimits } as never),
        () => validateRotateInput({ rateLimits } as never, now),
      ]
    ) {
      assert.throws(
        run,
        (error: Error) =>
          error instanceof TypeError &&
          /rate-limit policy "day": unknown field `sharedby` \(known: .*sharedBy/.test(
            error.message,
          ),
      );
    }
  });
});
