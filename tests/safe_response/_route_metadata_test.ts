/**
 * The swagger metadata keys `./safe-response/nest` writes without importing
 * `@nestjs/swagger`, pinned against the installed package's `DECORATORS`: a
 * swagger release that renames one fails here.
 */
import "reflect-metadata";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Get, Next, Post, Redirect, Render, Res } from "@nestjs/common";
import { DECORATORS } from "@nestjs/swagger";
import {
  HTTP_CODE_METADATA,
  METHOD_METADATA,
  REDIRECT_METADATA,
  RENDER_METADATA,
  RESPONSE_PASSTHROUGH_METADATA,
  ROUTE_ARGS_METADATA,
  SSE_METADATA,
} from "@nestjs/common/constants.js";
import { RouteParamtypes } from "@nestjs/common/enums/route-paramtypes.enum.js";
import { ProblemType } from "../../safe_response/_route_decorators.ts";
import {
  combine,
  markDeprecatedOperation,
  markExtension,
  NEST_HTTP_CODE,
  NEST_METHOD_METADATA,
  NEST_REDIRECT_METADATA,
  NEST_RENDER_METADATA,
  NEST_RESPONSE_PASSTHROUGH_METADATA,
  NEST_ROUTE_ARGS_METADATA,
  NEST_SSE_METADATA,
  ownSuccessMediaType,
  readRouteOptions,
  redirectStatusOf,
  routeHandlersOf,
  setMetadata,
  SWAGGER_METADATA,
} from "../../safe_response/_route_metadata.ts";

describe("swagger metadata by key", () => {
  it("uses the installed @nestjs/swagger's keys", () => {
    assert.equal(SWAGGER_METADATA.operation, DECORATORS.API_OPERATION);
    assert.equal(SWAGGER_METADATA.extension, DECORATORS.API_EXTENSION);
    assert.equal(SWAGGER_METADATA.response, DECORATORS.API_RESPONSE);
    assert.equal(SWAGGER_METADATA.parameters, DECORATORS.API_PARAMETERS);
  });

  it("uses the installed @nestjs/common's keys", () => {
    assert.equal(NEST_HTTP_CODE, HTTP_CODE_METADATA);
    assert.equal(NEST_METHOD_METADATA, METHOD_METADATA);
    assert.equal(NEST_REDIRECT_METADATA, REDIRECT_METADATA);
    assert.equal(NEST_RENDER_METADATA, RENDER_METADATA);
    assert.equal(NEST_SSE_METADATA, SSE_METADATA);
    assert.equal(NEST_ROUTE_ARGS_METADATA, ROUTE_ARGS_METADATA);
    assert.equal(NEST_RESPONSE_PASSTHROUGH_METADATA, RESPONSE_PASSTHROUGH_METADATA);
    assert.deepEqual([RouteParamtypes.RESPONSE, RouteParamtypes.NEXT], [1, 2]);
  });

  it("setMetadata and combine write on the handler of a method, on the class otherwise", () => {
    const both = combine(setMetadata("k", 1), setMetadata("j", 2));
    class Routes {
      list() {}
    }
    const descriptor = Object.getOwnPropertyDescriptor(Routes.prototype, "list")!;
    both(Routes.prototype, "list", descriptor);
    both(Routes);
    assert.equal(Reflect.getMetadata("j", Routes.prototype.list), 2);
    assert.equal(Reflect.getOwnMetadata("k", Routes), 1);
    assert.equal(Reflect.getOwnMetadata("k", Routes.prototype), undefined);
  });

  it("merges deprecated into the operation and keeps existing extensions", () => {
    class Routes {
      list() {}
    }
    const descriptor = Object.getOwnPropertyDescriptor(Routes.prototype, "list")!;
    Get()(Routes.prototype, "list", descriptor);
    Reflect.defineMetadata(DECORATORS.API_OPERATION, { summary: "List" }, Routes.prototype.list);
    markDeprecatedOperation()(Routes);
    markExtension("x-a", 1)(Routes.prototype, "list", descriptor);
    markExtension("x-a", 2)(Routes.prototype, "list", descriptor);
    assert.deepEqual(Reflect.getMetadata(DECORATORS.API_OPERATION, Routes.prototype.list), {
      summary: "List",
      deprecated: true,
    });
    assert.deepEqual(Reflect.getMetadata(DECORATORS.API_EXTENSION, Routes.prototype.list), {
      "x-a": 1,
    });
  });
});

describe("readRouteOptions", () => {
  it("reads a handler with @Res() or @Next() and no passthrough as raw (Nest then sends nothing)", () => {
    class Routes {
      @Get("res")
      res(@Res() _response: unknown) {}
      @Get("next")
      next(@Next() _next: unknown) {}
      @Get("passthrough")
      passthrough(@Res({ passthrough: true }) _response: unknown) {}
      @Post("plain")
      plain() {}
    }
    class Child extends Routes {}
    const raw = (controller: object, name: keyof Routes) =>
      readRouteOptions(controller, Routes.prototype[name]).raw === true;
    assert.deepEqual(
      [raw(Routes, "res"), raw(Routes, "next"), raw(Routes, "passthrough"), raw(Routes, "plain")],
      [true, true, false, false],
    );
    assert.equal(raw(Child, "res"), true, "a controller inheriting the handler");
    assert.equal(raw(Child, "passthrough"), false);
  });
});

describe("what Nest sends for a route it answers", () => {
  it("redirects with @Redirect's status, else 302, unless @Render (Nest tests it first)", () => {
    class Routes {
      @Get("a")
      @Redirect("/t", 301)
      a() {}
      @Get("b")
      @Redirect("/t")
      b() {}
      @Get("c")
      @Render("view")
      @Redirect("/t", 301)
      c() {}
      @Get("d")
      d() {}
    }
    const { a, b, c, d } = Routes.prototype;
    assert.deepEqual([a, b, c, d].map(redirectStatusOf), [301, 302, undefined, undefined]);
    assert.deepEqual([a, c, d].map(ownSuccessMediaType), [null, "text/html", null]);
  });
});

describe("routeHandlersOf", () => {
  it("makes an inherited route the class's own, calling the base's; an override without a route is none", () => {
    class Base {
      factor = 2;
      @Get("a")
      a(n: number) {
        return n * this.factor;
      }
      @Get("b")
      b() {}
    }
    class Sub extends Base {
      override b() {} // no longer a route
    }
    const [a] = routeHandlersOf(Sub) as ((n: number) => number)[];
    assert.deepEqual(routeHandlersOf(Sub), [a]);
    assert.ok(Object.hasOwn(Sub.prototype, "a") && a !== Base.prototype.a);
    assert.equal(a.name, "a");
    assert.equal(new Sub().a(3), 6);
    assert.equal(Reflect.getOwnMetadata(METHOD_METADATA, a), 0);
    assert.deepEqual(routeHandlersOf(Base), [Base.prototype.a, Base.prototype.b]);
  });

  it("a subclass's class decorator wins over its base's on the inherited routes, as the server reads it", () => {
    @ProblemType("https://e.example/base")
    class Base {
      @Get("a")
      a() {}
    }
    @ProblemType("https://e.example/sub")
    class Sub extends Base {}
    const extension = (handler: object) =>
      Reflect.getMetadata(SWAGGER_METADATA.extension, handler)["x-safe-problem-type"];
    assert.equal(extension(Base.prototype.a), "https://e.example/base");
    assert.equal(extension(Sub.prototype.a), "https://e.example/sub");
    assert.equal(readRouteOptions(Sub, Sub.prototype.a).problemType, "https://e.example/sub");
    assert.equal(readRouteOptions(Base, Base.prototype.a).problemType, "https://e.example/base");
  });
});
