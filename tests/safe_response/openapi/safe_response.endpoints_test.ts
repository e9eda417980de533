import "reflect-metadata";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Controller, Delete, Module } from "@nestjs/common";
import { ApiProperty, DECORATORS, DocumentBuilder, SwaggerModule } from "@nestjs/swagger";
import { SafeResponseModule } from "../../../safe_response/nest/mod.ts";
import { ADAPTERS, boot } from "../nest/helpers.ts";
import {
  SafeCursorPaginatedEndpoint,
  SafeEndpoint,
  SafePaginatedEndpoint,
} from "../../../safe_response/openapi/safe_response.endpoints.ts";

class Dto {}
const metadataOf = (decorator: MethodDecorator, key: string) => {
  class Routes {
    get() {}
  }
  decorator(Routes.prototype, "get", Object.getOwnPropertyDescriptor(Routes.prototype, "get")!);
  return Reflect.getMetadata(key, Routes.prototype.get);
};
const responsesOf = (decorator: MethodDecorator) => metadataOf(decorator, DECORATORS.API_RESPONSE);

describe("safe_response.endpoints", () => {
  it("SafeEndpoint documents the success and the listed errors together", () => {
    const responses = responsesOf(SafeEndpoint(Dto, { errors: [404] }));
    assert.deepEqual(Object.keys(responses).sort(), ["200", "404"]);
    assert.ok(responses["404"].content["application/json"]);
  });

  it("problemDetails documents the errors as application/problem+json", () => {
    const responses = responsesOf(SafeEndpoint(Dto, { errors: [404], problemDetails: true }));
    assert.deepEqual(Object.keys(responses["404"].content), ["application/problem+json"]);
  });

  it('errorFormat: "problem" documents problem details; it wins over a disagreeing problemDetails, with a warning', () => {
    const responses = responsesOf(SafeEndpoint(Dto, { errors: [404], errorFormat: "problem" }));
    assert.deepEqual(Object.keys(responses["404"].content), ["application/problem+json"]);
    const safe = responsesOf(SafePaginatedEndpoint(Dto, { errors: [404], errorFormat: "safe" }));
    assert.deepEqual(Object.keys(safe["404"].content), ["application/json"]);
    const warn = console.warn;
    const warnings: string[] = [];
    console.warn = (...args: unknown[]) => warnings.push(args.join(" "));
    try {
      const won = responsesOf(
        SafeEndpoint(Dto, { errors: [404], errorFormat: "problem", problemDetails: false }),
      );
      assert.deepEqual(Object.keys(won["404"].content), ["application/problem+json"]);
    } finally {
      console.warn = warn;
    }
    assert.equal(warnings.length, 1);
    assert.match(
      warnings[0],
      /SafeEndpoint: `errorFormat` \("problem"\) and `problemDetails` \(false\) disagree; `errorFormat` wins/,
    );
    assert.throws(
      // @ts-expect-error: not a format
      () => SafeCursorPaginatedEndpoint(Dto, { errorFormat: "json" }),
      /SafeCursorPaginatedEndpoint: `errorFormat` must be "safe" or "problem"/,
    );
  });

  it("fieldSelection documents its query parameter with the quotas; false documents none", () => {
    const parameters = metadataOf(
      SafePaginatedEndpoint(Dto, { fieldSelection: { queryParam: "select", maxFields: 4 } }),
      DECORATORS.API_PARAMETERS,
    );
    const select = parameters.find((parameter: { name: string }) => parameter.name === "select");
    assert.equal(select.in, "query");
    assert.match(select.description, /at most 4, each at most 1024 characters/);
    for (const fieldSelection of [false, undefined]) {
      const none = metadataOf(SafeEndpoint(Dto, { fieldSelection }), DECORATORS.API_PARAMETERS);
      assert.equal(none, undefined);
    }
    assert.throws(() => SafeEndpoint(Dto, { fieldSelection: { maxFields: 0 } }), /maxFields/);
  });

  it("the paginated endpoints document their pagination meta", () => {
    assert.match(
      JSON.stringify(responsesOf(SafePaginatedEndpoint(Dto))["200"]),
      /schemas\/SafePaginationMeta"/,
    );
    assert.match(
      JSON.stringify(responsesOf(SafeCursorPaginatedEndpoint(Dto))["200"]),
      /schemas\/SafeCursorPaginationMeta"/,
    );
  });

  it("refuses an unknown option, naming the composite, the option and the known ones", () => {
    const common = "description, sort, filter, message, code, errors, deprecated, errorFormat, " +
      "problemDetails, fieldSelection";
    assert.throws(
      () => SafeEndpoint(Dto, { paginatd: true } as never),
      new RegExp(
        `^TypeError: SafeEndpoint: unknown option \`paginatd\` \\(known: ${common}, statusCode, isArray\\)$`,
      ),
    );
    const paging = { links: true, maxLimt: 5 }; // a misspelt maxLimit: no cap on ?limit=
    for (
      const [composite, name] of [
        [SafePaginatedEndpoint, "SafePaginatedEndpoint"],
        [SafeCursorPaginatedEndpoint, "SafeCursorPaginatedEndpoint"],
      ] as const
    ) {
      assert.throws(
        () => composite(Dto, paging),
        new RegExp(
          `^TypeError: ${name}: unknown option \`maxLimt\` \\(known: ${common}, maxLimit, defaultLimit, links, linkHeader\\)$`,
        ),
      );
      // A plain endpoint's options: the status of a paginated one is always 200.
      assert.throws(
        () => composite(Dto, { statusCode: 201 } as never),
        /unknown option `statusCode`/,
      );
    }
    assert.throws(
      () => SafeEndpoint(Dto, { deprecated: { sunsett: "2027-01-01" } as never }),
      /^TypeError: Deprecated: unknown option `sunsett`/,
    );
  });

  it("rejects a status outside 100-599, naming the decorator", () => {
    assert.throws(() => SafeEndpoint(Dto, { statusCode: 700 }), /SafeEndpoint/);
  });

  it("SafeEndpoint with a status without content documents no body, as the server sends none", async () => {
    for (const status of [204, 205, 304]) {
      const responses = responsesOf(SafeEndpoint(Dto, { statusCode: status, description: "Done" }));
      assert.deepEqual(JSON.parse(JSON.stringify(responses[status])), { description: "Done" });
    }
    for (const adapter of ADAPTERS) {
      const running = await boot(NoContentModule, adapter);
      try {
        const document = SwaggerModule.createDocument(running.app, new DocumentBuilder().build());
        const documented = document.paths["/items/{id}"].delete!.responses["204"];
        const response = await fetch(`${running.url}/items/1`, { method: "DELETE" });
        assert.equal(response.status, 204);
        assert.equal(await response.text(), "");
        assert.deepEqual(documented, { description: "Deleted" });
      } finally {
        await running.close();
      }
    }
  });
});

class ItemDto {
  @ApiProperty()
  id!: string;
}

@Controller("items")
class NoContentController {
  @Delete(":id")
  @SafeEndpoint(ItemDto, { statusCode: 204, description: "Deleted" })
  remove() {
    return { id: "1" };
  }
}

@Module({ imports: [SafeResponseModule.register()], controllers: [NoContentController] })
class NoContentModule {}
