import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Controller, Get, Module } from "@nestjs/common";
import { hasFieldSelection, isSuccess } from "../../../client/mod.ts";
import {
  FieldSelection,
  Paginated,
  RawResponse,
  SafeResponseModule,
} from "../../../safe_response/nest/mod.ts";
import { ADAPTERS, boot, getJson, type RunningApp } from "./helpers.ts";

const USER = Object.freeze({
  id: 1,
  name: "Ada",
  email: "ada@example.com",
  address: Object.freeze({ city: "London", zip: "N1" }),
});

@Controller("users")
class UsersController {
  @Get("one")
  one() {
    return USER; // frozen: selection must copy, never mutate
  }

  @Get("list")
  @Paginated()
  list() {
    return { data: [USER, { id: 2, name: "Grace" }], total: 2, page: 1, limit: 10 };
  }

  @Get("off")
  @FieldSelection(false)
  off() {
    return USER;
  }

  @Get("custom")
  @FieldSelection({ queryParam: "select", maxDepth: 1 })
  custom() {
    return USER;
  }

  @Get("raw")
  @RawResponse()
  raw() {
    return USER;
  }
}

@Module({
  imports: [SafeResponseModule.register({ fieldSelection: true, timestamp: false, path: false })],
  controllers: [UsersController],
})
class AllRoutesModule {}

@Controller("opt-in")
class OptInController {
  @Get("plain")
  plain() {
    return USER;
  }

  @Get("on")
  @FieldSelection()
  on() {
    return USER;
  }
}

@Module({
  imports: [SafeResponseModule.register({ timestamp: false, path: false })],
  controllers: [OptInController],
})
class OptInModule {}

for (const adapter of ADAPTERS) {
  describe(`field selection, module option (${adapter})`, () => {
    let app: RunningApp;
    before(async () => app = await boot(AllRoutesModule, adapter));
    after(() => app.close());

    it("keeps the selected fields and lists them in meta.fields", async () => {
      const { status, body } = await getJson(app.url, "/users/one?fields=id,name,address.city");
      assert.equal(status, 200);
      assert.deepEqual(body, {
        success: true,
        statusCode: 200,
        data: { id: 1, name: "Ada", address: { city: "London" } },
        meta: { fields: ["id", "name", "address.city"] },
      });
      assert.ok(isSuccess(body) && hasFieldSelection(body.meta));
    });

    it("sends everything without the parameter (the handler's object is untouched)", async () => {
      await getJson(app.url, "/users/one?fields=id");
      const { body } = await getJson(app.url, "/users/one");
      assert.deepEqual(body.data, USER);
      assert.equal(body.meta, undefined);
    });

    it("applies to the items of paginated routes", async () => {
      const { body } = await getJson(app.url, "/users/list?fields=name");
      assert.deepEqual(body.data, [{ name: "Ada" }, { name: "Grace" }]);
      const meta = body.meta as Record<string, unknown>;
      assert.deepEqual(meta.fields, ["name"]);
      assert.equal((meta.pagination as { total: number }).total, 2);
    });

    it("is harmless with hostile input", async () => {
      const query = "fields=__proto__,constructor.prototype,address.__proto__.x" +
        "&fields=id&fields=a.b.c.d.e&fields=" + "z".repeat(5000);
      const { status, body } = await getJson(app.url, `/users/one?${query}`);
      assert.equal(status, 200);
      assert.deepEqual(body.data, { id: 1 });
      assert.deepEqual((body.meta as { fields: string[] }).fields, ["id", "a.b.c"]);
      assert.equal(({} as Record<string, unknown>).x, undefined);
    });

    it("FieldSelection(false) turns it off on one route", async () => {
      const { body } = await getJson(app.url, "/users/off?fields=id");
      assert.deepEqual(body.data, USER);
      assert.equal(body.meta, undefined);
    });

    it("the decorator's options win", async () => {
      const fields = await getJson(app.url, "/users/custom?fields=id");
      assert.deepEqual(fields.body.data, USER);
      const { body } = await getJson(app.url, "/users/custom?select=id,address.city");
      assert.deepEqual(body.data, { id: 1, address: USER.address }); // maxDepth 1
      assert.deepEqual((body.meta as { fields: string[] }).fields, ["id", "address"]);
    });

    it("leaves RawResponse routes alone", async () => {
      const { body } = await getJson(app.url, "/users/raw?fields=id");
      assert.deepEqual(body, USER);
    });
  });

  describe(`field selection, per route (${adapter})`, () => {
    let app: RunningApp;
    before(async () => app = await boot(OptInModule, adapter));
    after(() => app.close());

    it("is off unless the route opts in", async () => {
      const plain = await getJson(app.url, "/opt-in/plain?fields=id");
      assert.deepEqual(plain.body.data, USER);
      const { body } = await getJson(app.url, "/opt-in/on?fields=id");
      assert.deepEqual(body.data, { id: 1 });
      assert.deepEqual(body.meta, { fields: ["id"] });
    });
  });
}

describe("field selection options", () => {
  it("are validated at registration and decoration", () => {
    assert.throws(
      () => SafeResponseModule.register({ fieldSelection: { maxDepth: 0 } }),
      /fieldSelection\.maxDepth/,
    );
    assert.throws(() => FieldSelection({ separator: "" }), /FieldSelection options\.separator/);
  });
});
