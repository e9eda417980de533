import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  FIELD_SELECTION_LIMITS,
  type FieldSelectionSettings,
  parseFieldSelection,
  resolveFieldSelection,
  selectFields,
} from "../../safe_response/field_selection.ts";

const SETTINGS: FieldSelectionSettings = {
  queryParam: "fields",
  separator: ",",
  maxDepth: 3,
  maxFields: 50,
  maxFieldLength: 1024,
};
const select = (data: unknown, raw: unknown, settings = SETTINGS) => {
  const selection = parseFieldSelection(raw, settings);
  return selection === undefined ? data : selectFields(data, selection);
};

const USER = {
  id: 1,
  name: "Ada",
  email: "ada@example.com",
  address: { city: "London", zip: "N1", geo: { lat: 51, lng: 0, alt: { m: 11 } } },
  tags: [{ id: "t1", label: "x" }, { id: "t2", label: "y" }],
};

describe("parseFieldSelection", () => {
  it("normalises: trims, drops empty parts and duplicates, keeps order", () => {
    assert.deepEqual(parseFieldSelection(" id, name,,id ,address.city", SETTINGS)?.fields, [
      "id",
      "name",
      "address.city",
    ]);
  });

  it("ignores __proto__, constructor and prototype anywhere in a path", () => {
    const raw = "__proto__,constructor.name,a.prototype,b.__proto__.c,ok";
    assert.deepEqual(parseFieldSelection(raw, SETTINGS)?.fields, ["ok"]);
    assert.equal(parseFieldSelection("__proto__", SETTINGS), undefined);
  });

  it("cuts paths deeper than maxDepth", () => {
    const settings = { ...SETTINGS, maxDepth: 2 };
    assert.deepEqual(parseFieldSelection("a.b.c.d,x", settings)?.fields, ["a.b", "x"]);
  });

  it("bounds repeated parameters, total length and field count", () => {
    const repeated = Array.from({ length: 20 }, (_, i) => `f${i}`);
    assert.equal(parseFieldSelection(repeated, SETTINGS)?.fields.length, 10);
    const long = "a".repeat(FIELD_SELECTION_LIMITS.length + 10);
    assert.equal(parseFieldSelection(long, SETTINGS), undefined); // the cut field is dropped
    const many = Array.from({ length: 500 }, (_, i) => `f${i}`).join(",");
    assert.equal(parseFieldSelection(many, SETTINGS)?.fields.length, FIELD_SELECTION_LIMITS.fields);
    const huge = "id," + "x,".repeat(1_000_000);
    assert.deepEqual(parseFieldSelection(huge, SETTINGS)?.fields, ["id", "x"]);
  });

  it("keeps at most maxFields paths and drops paths longer than maxFieldLength", () => {
    const settings = { ...SETTINGS, maxFields: 2, maxFieldLength: 5 };
    assert.deepEqual(parseFieldSelection("abcdef,id,a.b.c,name", settings)?.fields, [
      "id",
      "a.b.c",
    ]);
    assert.equal(parseFieldSelection("abcdef", settings), undefined);
  });

  it("ignores values a query parser may produce that are not strings", () => {
    assert.equal(parseFieldSelection({ a: "id" }, SETTINGS), undefined);
    assert.equal(parseFieldSelection(undefined, SETTINGS), undefined);
    assert.deepEqual(parseFieldSelection(["id", 3, { x: 1 }], SETTINGS)?.fields, ["id"]);
  });

  it("honours a custom separator", () => {
    const settings = { ...SETTINGS, separator: "|" };
    assert.deepEqual(parseFieldSelection("id|name", settings)?.fields, ["id", "name"]);
  });
});

describe("selectFields", () => {
  it("keeps the selected fields, with dot notation and through arrays", () => {
    assert.deepEqual(select(USER, "id,address.city,tags.id,nope"), {
      id: 1,
      address: { city: "London" },
      tags: [{ id: "t1" }, { id: "t2" }],
    });
    assert.deepEqual(select([USER, { id: 2 }], "id,name"), [{ id: 1, name: "Ada" }, { id: 2 }]);
  });

  it("a whole field wins over its sub-fields, in either order", () => {
    const expected = { address: USER.address };
    assert.deepEqual(select(USER, "address,address.city"), expected);
    assert.deepEqual(select(USER, "address.city,address"), expected);
  });

  it("keeps null, primitives and dates as they are", () => {
    const when = new Date(0);
    const data = { a: null, s: "x", when, n: 1 };
    assert.deepEqual(select(data, "a.b,s.length,when.year"), { a: null, s: "x", when });
    assert.equal(select("plain", "id"), "plain");
  });

  it("reads own properties only", () => {
    const data = Object.create({ inherited: "secret" });
    data.own = 1;
    assert.deepEqual(JSON.parse(JSON.stringify(select(data, "own,inherited,toString"))), {
      own: 1,
    });
  });

  it("copies enumerable properties only: what JSON.stringify would hide (an Error's stack, a field defined non-enumerable) stays hidden", () => {
    const user = { id: 1 };
    Object.defineProperty(user, "passwordHash", { value: "$argon2id$secret", enumerable: false });
    const data = { user, lastError: new Error("db down") };
    const sent = JSON.stringify(
      select(data, "user.id,user.passwordHash,lastError.stack,lastError.message"),
    );
    assert.equal(sent, JSON.stringify({ user: { id: 1 }, lastError: {} }));
  });

  it("keeps the class of a selected instance (a serializer after it, such as class-transformer's, still sees it) and defines each field on the copy (no setter of the class runs)", () => {
    let setterRan = false;
    class User {
      id = "u1";
      secret = "s";
      set name(_value: string) {
        setterRan = true;
      }
    }
    const user = new User();
    Object.defineProperty(user, "name", { value: "Ada", enumerable: true });
    const picked = select(user, "id,name") as User;
    assert.ok(picked instanceof User);
    assert.deepEqual(Object.keys(picked), ["id", "name"]);
    assert.equal((picked as unknown as { name: string }).name, "Ada");
    assert.equal(setterRan, false);
    assert.equal(Object.hasOwn(picked, "secret"), false);
  });

  it("walks 3,000 nested arrays (stored data, not the selection) without recursion, selecting the objects inside", () => {
    // Past the recursion of before (about 1,800 levels); within what Node 20's JSON.stringify sends
    // (about 4,000 levels; Deno's has no such bound).
    let data: unknown = [{ id: 1, secret: "s" }, "x"];
    let expected: unknown = [{ id: 1 }, "x"];
    for (let level = 0; level < 3_000; level++) [data, expected] = [[data], [expected]];
    assert.equal(
      JSON.stringify(select({ id: 7, tags: data }, "id,tags.id")),
      JSON.stringify({ id: 7, tags: expected }),
    );
  });

  it("keeps an Array subclass's class on the copy (its toJSON still runs; no constructor runs)", () => {
    let constructed = 0;
    class Tagged<T> extends Array<T> {
      constructor(...items: T[]) {
        super(...items);
        constructed++;
      }
      toJSON() {
        return { items: [...this], tag: "T" };
      }
    }
    const tagged = new Tagged({ id: 1, secret: "s" });
    constructed = 0;
    const picked = select({ list: tagged, nested: [tagged] }, "list.id,nested.id") as {
      list: unknown;
      nested: unknown[];
    };
    assert.ok(picked.list instanceof Tagged);
    assert.equal(
      JSON.stringify(picked),
      '{"list":{"items":[{"id":1}],"tag":"T"},"nested":[{"items":[{"id":1}],"tag":"T"}]}',
    );
    assert.equal(constructed, 0);
  });

  it("copies an array met twice once: shared stays shared, a cycle stays one for JSON.stringify to refuse", () => {
    const shared = [{ id: 1, secret: "s" }];
    const picked = select({ a: [shared, [shared]] }, "a.id") as { a: [unknown, [unknown]] };
    assert.deepEqual(picked.a[0], [{ id: 1 }]);
    assert.equal(picked.a[1][0], picked.a[0]);
    const loop: unknown[] = [{ id: 2, secret: "s" }];
    loop.push(loop);
    const copy = select(loop, "id") as unknown[];
    assert.deepEqual(copy[0], { id: 2 });
    assert.equal(copy[1], copy);
    assert.throws(() => JSON.stringify(copy), TypeError);
  });

  it("never mutates the input nor pollutes prototypes (property)", () => {
    const json = fc.jsonValue({ maxDepth: 4 });
    const part = fc.constantFrom("id", "a", "b", "__proto__", "constructor", "prototype", "", " a");
    const raw = fc.array(fc.array(part, { minLength: 1, maxLength: 5 }).map((s) => s.join(".")))
      .map((parts) => parts.join(","));
    fc.assert(
      fc.property(json, raw, (data, query) => {
        const before = JSON.stringify(data);
        const selection = parseFieldSelection(query, SETTINGS);
        const selected = selection === undefined ? data : selectFields(data, selection);
        assert.equal(JSON.stringify(data), before);
        assert.equal(({} as Record<string, unknown>).polluted, undefined);
        if (selection !== undefined && typeof selected === "object" && selected !== null) {
          if (Array.isArray(selected)) return;
          for (const key of Object.keys(selected)) assert.ok(["id", "a", "b"].includes(key));
          assert.equal(Object.getPrototypeOf(selected), Object.prototype);
        }
      }),
      { seed: 11, numRuns: 300 },
    );
  });
});

describe("resolveFieldSelection", () => {
  it("applies defaults and overrides a base", () => {
    assert.deepEqual(resolveFieldSelection(true, "x"), SETTINGS);
    assert.equal(resolveFieldSelection(false, "x"), undefined);
    const base = { ...SETTINGS, queryParam: "select" };
    assert.deepEqual(resolveFieldSelection({ maxDepth: 1 }, "x", base), { ...base, maxDepth: 1 });
  });

  it("rejects bad options, naming them", () => {
    assert.throws(() => resolveFieldSelection({ maxDepth: 0 }, "opt"), /opt\.maxDepth/);
    assert.throws(() => resolveFieldSelection({ separator: "." }, "opt"), /opt\.separator/);
    assert.throws(() => resolveFieldSelection({ queryParam: "" }, "opt"), /opt\.queryParam/);
    assert.throws(
      () => resolveFieldSelection({ depth: 2 }, "opt"),
      /^TypeError: opt: unknown option `depth` \(known: queryParam, separator, maxDepth, maxFields, maxFieldLength\)$/,
    );
    for (const [key, bad] of [["maxFields", 0], ["maxFields", 513], ["maxFieldLength", 1.5]]) {
      assert.throws(() => resolveFieldSelection({ [key]: bad }, "opt"), new RegExp(`opt\\.${key}`));
    }
    assert.equal(resolveFieldSelection({ maxFields: 3 }, "opt")?.maxFields, 3);
    assert.throws(() => resolveFieldSelection("yes", "opt"), /opt must be/);
  });
});
