import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { I18nServiceAdapter } from "../../safe_response/i18n_adapter.ts";

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
