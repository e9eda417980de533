import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as core from "../../safe_response/mod.ts";
import * as aliases from "../../safe_response/deprecated_names.ts";

/** The renamed names of `@nestarc/safe-response` aliased by the core, with their new names. */
const ALIASES = {
  DEFAULT_ERROR_CODE_MAP: "DEFAULT_ERROR_CODES",
  DEFAULT_PROBLEM_TITLE_MAP: "DEFAULT_PROBLEM_TITLES",
  NestI18nAdapter: "I18nServiceAdapter",
} as const;

describe("deprecated names of @nestarc/safe-response (./safe-response)", () => {
  it("are the renamed values themselves, exported by the core", () => {
    for (const [old, renamed] of Object.entries(ALIASES)) {
      assert.equal(core[old as keyof typeof core], aliases[old as keyof typeof aliases], old);
      assert.equal(aliases[old as keyof typeof aliases], core[renamed], old);
    }
    assert.equal(core.DEFAULT_ERROR_CODE_MAP[404], "NOT_FOUND");
    const adapter: core.NestI18nAdapter = new core.NestI18nAdapter({ translate: (key) => key });
    const service: core.I18nServiceLike = { translate: (key) => key };
    assert.ok(adapter instanceof core.I18nServiceAdapter && service);
  });

  it("are marked @deprecated with the new name in their docs", () => {
    const source = readFileSync(
      new URL("../../safe_response/deprecated_names.ts", import.meta.url),
      "utf8",
    );
    for (
      const [old, renamed] of [...Object.entries(ALIASES), [
        "I18nServiceLike",
        "TranslatingService",
      ]]
    ) {
      assert.match(
        source,
        new RegExp(`@deprecated Use \`${renamed}\`[^]*?export (const|type|interface) ${old}\\b`),
        old,
      );
    }
  });
});
