import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { columns, environmentLabel, statusLabel } from "../../../client/elements/_row.ts";
import { API_KEYS_MANAGER_STRINGS as s } from "../../../client/elements/strings.ts";

describe("client/elements/_row.ts", () => {
  it("columns: usage and credits only when shown; actions last", () => {
    assert.deepEqual(columns(s, false, false).map(([id]) => id), [
      "key",
      "status",
      "created",
      "used",
      "actions",
    ]);
    assert.deepEqual(columns(s, true, true).map(([id]) => id).slice(4), [
      "usage",
      "credits",
      "actions",
    ]);
  });

  it("environment labels come from the strings; others as given", () => {
    assert.equal(environmentLabel({ ...s, environmentLive: "Production" }, "live"), "Production");
    assert.equal(environmentLabel(s, "test"), "Test");
    assert.equal(environmentLabel(s, "eu"), "eu");
  });

  it("status labels come from the strings; others (a prototype name too) as given", () => {
    assert.equal(statusLabel(s, "rotating"), s.statusRotating);
    for (const status of ["suspended", "constructor", "toString", "__proto__"]) {
      assert.equal(statusLabel(s, status), status);
    }
  });

  it("cells carry explicit roles, so the cards keep their meaning", () => {
    const source = readFileSync(
      new URL("../../../client/elements/_row.ts", import.meta.url),
      "utf8",
    );
    for (const role of ["row", "rowheader", "cell"]) {
      assert.match(source, new RegExp(`role: "${role}"`));
    }
  });
});
