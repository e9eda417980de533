import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import * as nest from "../../../safe_response/nest/mod.ts";

const root = new URL("../../../", import.meta.url);

describe("./safe-response/nest", () => {
  it("exports the module and the runtime decorators, no OpenAPI decorator and no metadata key", () => {
    for (const name of ["SafeResponseModule", "Deprecated", "Paginated", "SafeResponse"]) {
      assert.ok(name in nest, name);
    }
    for (const name of Object.keys(nest)) {
      assert.doesNotMatch(name, /^Api|_METADATA$|applyGlobalErrors/);
    }
  });

  it("no file of the binding imports @nestjs/swagger", () => {
    const folder = new URL("safe_response/nest/", root);
    const files = readdirSync(folder).filter((name) => name.endsWith(".ts"));
    assert.ok(files.length >= 10, files.join(", "));
    for (const file of files) {
      const source = readFileSync(new URL(file, folder), "utf8");
      assert.doesNotMatch(source, /from "@nestjs\/swagger"/, file);
    }
  });
});
