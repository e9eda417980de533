import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
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
    for (const file of ["_http", "_integrations", "_swagger_metadata", "_versioning", "mod"]) {
      const source = readFileSync(new URL(`safe_response/nest/${file}.ts`, root), "utf8");
      assert.doesNotMatch(source, /from "@nestjs\/swagger"/, file);
    }
    for (const role of ["decorators", "filter", "interceptor", "module"]) {
      const path = `safe_response/nest/safe_response.${role}.ts`;
      assert.doesNotMatch(readFileSync(new URL(path, root), "utf8"), /from "@nestjs\/swagger"/);
    }
  });
});
