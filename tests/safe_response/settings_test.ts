import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { resolveSettings } from "../../safe_response/settings.ts";
import { SAFE_RESPONSE_SCHEMAS } from "../../safe_response/_openapi_schemas.ts";

describe("resolveSettings", () => {
  it("applies the spec defaults", () => {
    const settings = resolveSettings();
    assert.equal(settings.timestamp, true);
    assert.equal(settings.path, true);
    assert.equal(settings.responseTime, false);
    assert.equal(settings.suppressWarnings, false);
    assert.equal(settings.requestId, undefined);
    assert.equal(settings.problemDetails, undefined);
    assert.equal(settings.dateFormatter(new Date(0)), "1970-01-01T00:00:00.000Z");
    const on = resolveSettings({
      requestId: true,
      rateLimit: true,
      i18n: true,
      swagger: { globalErrors: [401] },
    });
    assert.equal(on.requestId?.headerName, "X-Request-Id");
    assert.deepEqual(on.rateLimit, { headerPrefix: "X-RateLimit", standard: false });
    assert.equal(on.i18n, "auto");
    assert.deepEqual(on.globalErrors, [401]);
  });

  it("gives an option set to undefined its default, and names an unknown one", () => {
    const explicit = resolveSettings({
      timestamp: undefined,
      validationDetails: undefined,
      dateFormatter: undefined,
      linkHeader: undefined,
    });
    assert.equal(explicit.timestamp, true);
    assert.equal(explicit.validationDetails, "messages");
    assert.equal(explicit.dateFormatter(new Date(0)), "1970-01-01T00:00:00.000Z");
    assert.equal(explicit.linkHeader, false);
    assert.throws(
      () => resolveSettings({ toString: undefined } as never),
      /^TypeError: SafeResponseModule: unknown option `toString` \(known: timestamp, path, [\w, ]+\)$/,
    );
    assert.throws(
      () => resolveSettings({ defaultLimit: 0 }, "createSafeFetch"),
      /^TypeError: createSafeFetch option: `defaultLimit` must be a positive integer$/,
      "the owner the errors name",
    );
  });

  it("validates legacyKeyLayouts, naming it", () => {
    assert.throws(
      () => resolveSettings({ legacyKeyLayouts: "nestarc-v0" as never }),
      /^TypeError: SafeResponseModule: option `legacyKeyLayouts` must be an array$/,
    );
    assert.throws(
      () => resolveSettings({ legacyKeyLayouts: ["nestarc-v9" as never] }, "createSafeFetch"),
      /^TypeError: createSafeFetch: option `legacyKeyLayouts`\[0\] is an unknown layout/,
    );
  });

  it("validates the module's defaultLimit", () => {
    assert.equal(resolveSettings().defaultLimit, undefined);
    assert.equal(resolveSettings({ defaultLimit: 25 }).defaultLimit, 25);
    for (const bad of [0, 1.5, "20", 2 ** 53]) {
      assert.throws(
        () => resolveSettings({ defaultLimit: bad as number }),
        /^TypeError: SafeResponseModule option: `defaultLimit` must be a positive integer$/,
      );
    }
  });
});

describe("resolveSettings problemDetails", () => {
  it("takes a baseUrl that is an absolute URL and an RFC 3986 URI, without a query or fragment", () => {
    const baseUrl = "https://errors.example.com/probl%C3%A8mes";
    assert.deepEqual(resolveSettings({ problemDetails: { baseUrl } }).problemDetails, { baseUrl });
    for (
      const bad of [
        "https://errors.example.com/problèmes",
        "/problems",
        "https://e.com/{x}",
        // A query or fragment would hold each code instead of the path.
        "https://e.example.com/problems?v=2",
        "https://e.example.com/problems#types",
        "https://e.example.com/problems?",
        "https://e.example.com/problems#",
      ]
    ) {
      assert.throws(
        () => resolveSettings({ problemDetails: { baseUrl: bad } }),
        /problemDetails\.baseUrl` must be an absolute URL/,
        bad,
      );
    }
  });
});

describe("resolveSettings rateLimit", () => {
  it("reads the IETF fields only with standard: true", () => {
    assert.deepEqual(resolveSettings({ rateLimit: { standard: true } }).rateLimit, {
      headerPrefix: "X-RateLimit",
      standard: true,
    });
    assert.throws(
      () => resolveSettings({ rateLimit: { standard: "yes" as unknown as boolean } }),
      /option `rateLimit.standard` must be a boolean/,
    );
  });
});

describe("resolveSettings linkHeader", () => {
  it('is false by default, else true or "only"', () => {
    assert.equal(resolveSettings().linkHeader, false);
    assert.equal(resolveSettings({ linkHeader: "only" }).linkHeader, "only");
    assert.throws(
      () => resolveSettings({ linkHeader: "header" as unknown as boolean }),
      /SafeResponseModule: option `linkHeader` must be true, false or "only"/,
    );
  });
});

describe("resolveSettings validationDetails", () => {
  it('is "messages" by default, else "fields"', () => {
    assert.equal(resolveSettings().validationDetails, "messages");
    assert.equal(resolveSettings({ validationDetails: "fields" }).validationDetails, "fields");
    assert.throws(
      () => resolveSettings({ validationDetails: "pointers" as "fields" }),
      /option `validationDetails` must be "messages" or "fields"/,
    );
  });
});

describe("resolveSettings context", () => {
  it("refuses context fields named after the envelope's own meta fields (the schemas')", () => {
    const built = new Set([
      ...Object.keys(SAFE_RESPONSE_SCHEMAS.SafeResponseMeta.properties as object),
      ...Object.keys(SAFE_RESPONSE_SCHEMAS.SafeErrorMeta.properties as object),
    ]);
    assert.ok(built.has("pagination") && built.has("rateLimit"), [...built].join(", "));
    for (const name of built) {
      assert.throws(
        () => resolveSettings({ context: { fields: { [name]: "key" } } }),
        (error: unknown) =>
          error instanceof TypeError && error.message.includes(`context.fields.${name}`),
        name,
      );
    }
    const settings = resolveSettings({ context: { fields: { tenant: "tenantId", plan: "plan" } } });
    assert.deepEqual(settings.context?.fields, { tenant: "tenantId", plan: "plan" });
  });
});
