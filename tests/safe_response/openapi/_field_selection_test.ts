import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { documentFieldSelection } from "../../../safe_response/openapi/_field_selection.ts";
import { resolveFieldSelection } from "../../../safe_response/field_selection.ts";

const REF = "#/components/schemas/";

/** A success envelope of `data` (allOf, as SafeResponse documents it). */
function operation(data: object) {
  return {
    responses: {
      "200": {
        content: {
          "application/json": {
            schema: { allOf: [{ $ref: `${REF}SafeSuccessResponse` }, { properties: { data } }] },
          },
        },
      },
      "404": { content: { "application/json": { schema: { $ref: `${REF}SafeErrorResponse` } } } },
    },
    parameters: [] as unknown[],
  };
}

function schemas() {
  return {
    User: {
      type: "object",
      required: ["id", "address"],
      properties: { id: { type: "string" }, address: { $ref: `${REF}Address` } },
    },
    Address: { type: "object", required: ["city"], properties: { city: { type: "string" } } },
    Node: { type: "object", required: ["next"], properties: { next: { $ref: `${REF}Node` } } },
  } as Record<string, object>;
}

describe("documentFieldSelection", () => {
  it("points data at <Model>Selection copies without required, nested models too", () => {
    const all = schemas();
    const op = operation({ $ref: `${REF}User` });
    documentFieldSelection(op, all, undefined);
    const data = (op.responses["200"].content["application/json"].schema.allOf[1] as {
      properties: { data: unknown };
    }).properties.data;
    assert.deepEqual(data, { $ref: `${REF}UserSelection` });
    const user = all.UserSelection as Record<string, unknown>;
    assert.equal(user.required, undefined);
    assert.deepEqual(user.properties, {
      id: { type: "string" },
      address: { $ref: `${REF}AddressSelection` },
    });
    assert.equal((all.AddressSelection as Record<string, unknown>).required, undefined);
    assert.deepEqual((all.User as { required: string[] }).required, ["id", "address"]); // kept
    assert.deepEqual(op.parameters, []); // no module option: no parameter
  });

  it("ends on a model that refers to itself, and is idempotent", () => {
    const all = schemas();
    const op = operation({ type: "array", items: { $ref: `${REF}Node` } });
    documentFieldSelection(op, all, undefined);
    documentFieldSelection(op, all, undefined);
    assert.deepEqual((all.NodeSelection as { properties: unknown }).properties, {
      next: { $ref: `${REF}NodeSelection` },
    });
    assert.equal(Object.keys(all).filter((name) => name.endsWith("Selection")).length, 1);
  });

  it("documents the module option's parameter once, on success envelopes only", () => {
    const settings = resolveFieldSelection(true, "fieldSelection")!;
    const op = operation({ $ref: `${REF}User` });
    documentFieldSelection(op, schemas(), settings);
    documentFieldSelection(op, schemas(), settings);
    assert.deepEqual(
      op.parameters.map((parameter) => (parameter as { name: string; in: string }).in),
      ["query"],
    );
    const raw = { responses: { "200": { content: { "application/json": { schema: {} } } } } };
    documentFieldSelection(raw, schemas(), settings);
    assert.equal((raw as { parameters?: unknown }).parameters, undefined);
  });

  it("refuses an application component of a derived name", () => {
    const all = { ...schemas(), UserSelection: { type: "object" } };
    assert.throws(
      () => documentFieldSelection(operation({ $ref: `${REF}User` }), all, undefined),
      { name: "TypeError", message: /already has a component `UserSelection`/ },
    );
  });
});
