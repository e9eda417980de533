/**
 * Per-field validation details: class-validator's errors become JSON
 * Pointers with their messages (bounded, never echoing input values), and
 * `resolveError` sends them with `validationDetails: "fields"`.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { BadRequestException } from "@nestjs/common";
import { resolveError } from "../../safe_response/error_resolution.ts";
import {
  attachValidationFields,
  describeValidationErrors,
  MAX_VALIDATION_DETAIL_LENGTH,
  MAX_VALIDATION_DETAILS,
  type ValidationErrorLike,
} from "../../safe_response/validation_details.ts";

const SECRET = "hunter2-secret-value";

const ERRORS: ValidationErrorLike[] = [
  {
    property: "name",
    value: SECRET,
    constraints: { isString: "name must be a string" },
  } as ValidationErrorLike,
  {
    property: "address",
    value: { zip: SECRET },
    children: [{
      property: "zip",
      value: SECRET,
      constraints: {
        isNotEmpty: "zip should not be empty",
        length: "zip must be longer than or equal to 5 characters",
      },
    } as ValidationErrorLike],
  } as ValidationErrorLike,
  {
    property: "tags",
    children: [{
      property: "0",
      children: [{ property: "a/b~c", constraints: { isInt: "a/b~c must be an integer" } }],
    }],
  },
];

describe("describeValidationErrors", () => {
  it("gives JSON Pointers (nested DTO: /address/zip) and Nest's flat message list", () => {
    const { fields, messages } = describeValidationErrors(ERRORS);
    assert.deepEqual(fields, [
      { pointer: "/name", messages: ["name must be a string"] },
      {
        pointer: "/address/zip",
        messages: ["zip should not be empty", "zip must be longer than or equal to 5 characters"],
      },
      { pointer: "/tags/0/a~1b~0c", messages: ["a/b~c must be an integer"] },
    ]);
    // The messages Nest's own ValidationPipe factory sends (its default "list" format).
    assert.deepEqual(messages, [
      "name must be a string",
      "address.zip should not be empty",
      "address.zip must be longer than or equal to 5 characters",
      "tags.0.a/b~c must be an integer",
    ]);
    assert.ok(!JSON.stringify({ fields, messages }).includes(SECRET));
  });

  it(`keeps at most ${MAX_VALIDATION_DETAILS} entries of at most ${MAX_VALIDATION_DETAIL_LENGTH} characters`, () => {
    const many = Array.from({ length: 500 }, (_, index) => ({
      property: String(index),
      constraints: { long: `${index} ${"x".repeat(2000)}`, second: "second message" },
    }));
    const { fields, messages } = describeValidationErrors([{ property: "items", children: many }]);
    assert.equal(fields.length, MAX_VALIDATION_DETAILS);
    assert.equal(messages.length, MAX_VALIDATION_DETAILS * 2);
    for (const field of fields) {
      const size = field.pointer.length + field.messages.reduce((sum, m) => sum + m.length, 0);
      assert.ok(size <= MAX_VALIDATION_DETAIL_LENGTH, String(size));
    }
    assert.deepEqual(fields[1].messages.length, 1);
    for (const message of messages) assert.ok(message.length <= MAX_VALIDATION_DETAIL_LENGTH);
    // A pointer longer than the bound (a hostile key) is cut too; a lone surrogate is not left.
    const key = `${"k".repeat(498)}\ud83d\ude00`;
    const [cut] = describeValidationErrors([{ property: key, constraints: { a: "m" } }]).fields;
    assert.equal(cut.pointer, `/${"k".repeat(498)}`);
  });

  it("cuts a long pointer before an escape, never inside one (still an RFC 6901 pointer)", () => {
    const POINTER = /^(\/([^~/]|~[01])*)*$/;
    for (let length = 480; length <= 500; length++) {
      for (const escaped of ["/", "~"]) {
        const key = "a".repeat(length) + escaped + "b";
        const [field] = describeValidationErrors([
          { property: "tags", children: [{ property: key, constraints: { a: "m" } }] },
        ]).fields;
        assert.match(field.pointer, POINTER, `${length} ${escaped}`);
        assert.ok(field.pointer.length <= MAX_VALIDATION_DETAIL_LENGTH);
      }
    }
  });

  it("never throws on odd shapes, and reads deep trees without recursion", () => {
    const odd = [
      null,
      7,
      { property: 1, constraints: { a: "one" } },
      { property: "p", constraints: { a: 5, b: "kept" }, children: "nope" },
      { property: "q", constraints: null, children: [null, { property: "r" }] },
    ] as unknown as ValidationErrorLike[];
    assert.deepEqual(describeValidationErrors(odd).fields, [
      { pointer: "/1", messages: ["one"] },
      { pointer: "/p", messages: ["kept"] },
    ]);
    let deep: ValidationErrorLike = { property: "leaf", constraints: { a: "deep" } };
    for (let depth = 0; depth < 100_000; depth++) deep = { property: "n", children: [deep] };
    assert.deepEqual(describeValidationErrors([deep]).fields, []);
  });
});

describe("resolveError with validationDetails", () => {
  const exception = () => {
    const { messages, fields } = describeValidationErrors(ERRORS);
    return attachValidationFields(new BadRequestException(messages), fields);
  };

  it('keeps the message list by default ("messages")', () => {
    const resolved = resolveError(exception());
    assert.equal(resolved.message, "Validation failed");
    assert.deepEqual(resolved.details, describeValidationErrors(ERRORS).messages);
  });

  it('sends [{ pointer, messages }] with "fields"', () => {
    const resolved = resolveError(exception(), { validationDetails: "fields" });
    assert.equal(resolved.message, "Validation failed");
    assert.deepEqual(resolved.details, describeValidationErrors(ERRORS).fields);
    // A list without fields (Nest's own ValidationPipe factory) is one entry for the whole body.
    const plain = resolveError(new BadRequestException(["a must be a string", 3]), {
      validationDetails: "fields",
    });
    assert.deepEqual(plain.details, [{ pointer: "", messages: ["a must be a string"] }]);
  });

  it(`bounds the message list too: ${MAX_VALIDATION_DETAILS} strings of ${MAX_VALIDATION_DETAIL_LENGTH} characters`, () => {
    const many = Array.from(
      { length: 20_000 },
      (_, index) => `items.${index}.name must be a string`,
    );
    const resolved = resolveError(new BadRequestException(many));
    assert.deepEqual(resolved.details, many.slice(0, MAX_VALIDATION_DETAILS));
    const long = `property ${"k".repeat(60_000)} should not exist`;
    const cut = resolveError(new BadRequestException([long, 42, "b must be a string"]));
    assert.deepEqual(cut.details, [
      long.slice(0, MAX_VALIDATION_DETAIL_LENGTH),
      "b must be a string",
    ]);
  });
});
