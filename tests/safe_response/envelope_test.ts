import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  buildErrorBody,
  buildProblemDetails,
  buildSuccessBody,
  I18nServiceAdapter,
  problemTypeUri,
  resolveSettings,
} from "../../safe_response/mod.ts";

describe("body builders", () => {
  it("builds success and error envelopes in field order, leaving out undefined fields", () => {
    const success = buildSuccessBody({
      statusCode: 200,
      data: [1],
      requestId: "r",
      code: undefined,
      path: "/x",
    });
    assert.deepEqual(Object.keys(success), ["success", "statusCode", "requestId", "data", "path"]);
    const error = buildErrorBody({
      statusCode: 404,
      code: "NOT_FOUND",
      message: "Not Found",
      details: ["d"],
    });
    assert.deepEqual(error, {
      success: false,
      statusCode: 404,
      error: { code: "NOT_FOUND", message: "Not Found", details: ["d"] },
    });
  });

  it("builds problem details with about:blank and the status title by default", () => {
    assert.deepEqual(
      buildProblemDetails({ status: 410, code: "GONE", detail: "Removed", instance: "/a" }),
      {
        type: "about:blank",
        title: "Gone",
        status: 410,
        detail: "Removed",
        instance: "/a",
        code: "GONE",
      },
    );
    assert.equal(
      problemTypeUri("https://x.example/p//", "api_key_invalid"),
      "https://x.example/p/api-key-invalid",
    );
  });
});

describe("I18nServiceAdapter", () => {
  it("passes the language, resolves i18nLang from the request or its raw request", () => {
    const seen: unknown[] = [];
    const adapter = new I18nServiceAdapter({
      translate: (key, options) => {
        seen.push(options);
        return key === "k" ? `t:${options?.lang}` : { nested: true };
      },
    });
    assert.equal(adapter.resolveLanguage({ raw: { i18nLang: "fr" } }), "fr");
    assert.equal(adapter.resolveLanguage({ i18nLang: "de" }), "de");
    assert.equal(adapter.resolveLanguage(null), undefined);
    assert.equal(adapter.translate("k", { lang: "fr" }), "t:fr");
    assert.equal(adapter.translate("object"), "object");
    assert.deepEqual(seen, [{ lang: "fr" }, {}]);
  });
});

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
    assert.equal(on.rateLimit?.headerPrefix, "X-RateLimit");
    assert.equal(on.i18n, "auto");
    assert.deepEqual(on.globalErrors, [401]);
  });
});

describe("buildSuccessBody with no handler result", () => {
  it("sends data as null, so the body keeps its required data field", () => {
    const body = buildSuccessBody({ statusCode: 204, data: undefined });
    assert.equal(body.data, null);
    assert.ok("data" in JSON.parse(JSON.stringify(body)));
  });
});
