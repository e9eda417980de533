import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { anotherCopy } from "../../another_copy.ts";
import {
  type ArgumentsHost,
  type CallHandler,
  Catch,
  Controller,
  type ExceptionFilter,
  type ExecutionContext,
  Get,
  HttpException,
  Injectable,
  Module,
  type NestInterceptor,
  UseFilters,
  UseInterceptors,
} from "@nestjs/common";
import { catchError, type Observable } from "rxjs";
import {
  defineErrors,
  ErrorCatalog,
  isSafeException,
  resolveError,
  SafeException as CoreSafeException,
} from "../../../safe_response/mod.ts";
import {
  createSafeException,
  SafeException,
} from "../../../safe_response/nest/safe_response.exception.ts";
import { SafeResponseModule } from "../../../safe_response/nest/safe_response.module.ts";
import { ADAPTERS, boot, getJson, type RunningApp } from "./helpers.ts";

const Errors = defineErrors({
  USER_NOT_FOUND: { status: 404, message: "User not found" },
  EMAIL_TAKEN: { status: 409, message: "Email already registered", details: { field: "email" } },
});

describe("SafeException of the Nest entry", () => {
  it("is an HttpException whose status is the catalog's", () => {
    const thrown = new SafeException("EMAIL_TAKEN", { catalog: Errors });
    assert.ok(thrown instanceof HttpException);
    assert.ok(thrown instanceof Error);
    assert.equal(thrown.getStatus(), 409);
    assert.deepEqual(thrown.getResponse(), {
      statusCode: 409,
      code: "EMAIL_TAKEN",
      message: "Email already registered",
      details: { field: "email" },
    });
    assert.equal(thrown.message, "Email already registered");
    assert.equal(thrown.name, "SafeException");
    assert.equal(thrown.code, "EMAIL_TAKEN");
    assert.equal(thrown.catalog, Errors);
  });

  it("carries the per-throw overrides and the cause", () => {
    const cause = new Error("db row 42");
    const thrown = new SafeException("USER_NOT_FOUND", {
      catalog: Errors,
      message: "User 42 not found",
      details: { id: 42 },
      cause,
    });
    assert.equal(thrown.getStatus(), 404);
    assert.deepEqual(thrown.overrides, { message: "User 42 not found", details: { id: 42 } });
    assert.deepEqual(thrown.getResponse(), {
      statusCode: 404,
      code: "USER_NOT_FOUND",
      message: "User 42 not found",
      details: { id: 42 },
    });
    assert.equal(thrown.cause, cause);
  });

  it("without its catalog, reports the status and body of the one defined catalog with its key", () => {
    const thrown = new SafeException("USER_NOT_FOUND", { details: { id: 7 } });
    assert.equal(thrown.getStatus(), 404);
    assert.deepEqual(thrown.getResponse(), {
      statusCode: 404,
      code: "USER_NOT_FOUND",
      message: "User not found",
      details: { id: 7 },
    });
    assert.equal(thrown.message, "USER_NOT_FOUND");
    assert.equal(thrown.catalog, undefined); // the filter's resolution order is unchanged
  });

  it("without its catalog, stays a 500 for a key in no defined catalog or in several", () => {
    const first = defineErrors({ SHARED_KEY: { status: 409, message: "One" } });
    const second = defineErrors({ SHARED_KEY: { status: 410, message: "Two" } });
    for (const key of ["SHARED_KEY", "GHOST"]) {
      const thrown = new SafeException(key);
      assert.equal(thrown.getStatus(), 500, key);
      assert.equal(thrown.getResponse(), key);
    }
    // A catalog defined after the throw counts too (resolved when asked, not when thrown).
    const late = new SafeException("DEFINED_LATER");
    const laterCatalog = defineErrors({ DEFINED_LATER: { status: 418, message: "Later" } });
    assert.equal(late.getStatus(), 418);
    assert.equal(new SafeException("SHARED_KEY", { catalog: second }).getStatus(), 410);
    assert.ok(first.has("SHARED_KEY") && laterCatalog.has("DEFINED_LATER"));
  });

  it("resolves exactly like the core SafeException", () => {
    const cases: [string, { message?: string; details?: unknown }][] = [
      ["USER_NOT_FOUND", {}],
      ["EMAIL_TAKEN", { message: "a@b.c is taken" }],
      ["EMAIL_TAKEN", { details: { field: "alias" } }],
      ["GHOST", {}],
    ];
    for (const [key, overrides] of cases) {
      for (const catalog of [undefined, Errors]) {
        const nest = new SafeException(key, { ...overrides, catalog });
        const core = new CoreSafeException(key, { ...overrides, catalog });
        assert.equal(isSafeException(nest), true);
        for (const registered of [undefined, Errors]) {
          assert.deepEqual(
            resolveError(nest, { errorCatalog: registered }),
            resolveError(core, { errorCatalog: registered }),
            `${key} ${JSON.stringify(overrides)} bound=${catalog !== undefined}`,
          );
        }
      }
    }
  });

  it("type-checks keys with the generic", () => {
    // @ts-expect-error: not a key of the catalog
    new SafeException<"USER_NOT_FOUND">("USER_NOT_FOUD");
  });
});

/** An interceptor of the application that only knows Nest's HttpException. */
@Injectable()
class StatusRecorder implements NestInterceptor {
  static seen: unknown[] = [];
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(catchError((error: unknown) => {
      StatusRecorder.seen.push(error instanceof HttpException ? error.getStatus() : "unknown");
      throw error;
    }));
  }
}

@Controller("x")
@UseInterceptors(StatusRecorder)
class ThrowingController {
  @Get("nest")
  nest() {
    throw new SafeException("EMAIL_TAKEN", { catalog: Errors, message: "a@b.c is taken" });
  }

  @Get("core")
  core() {
    throw new CoreSafeException("EMAIL_TAKEN", { catalog: Errors, message: "a@b.c is taken" });
  }

  @Get("registered")
  registered() {
    throw new SafeException("USER_NOT_FOUND");
  }
}

/** An exception filter of the application that knows only Nest's HttpException. */
@Catch(HttpException)
class ForeignFilter implements ExceptionFilter {
  catch(exception: HttpException, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse();
    const body = { foreign: true, ...(exception.getResponse() as object) };
    if (typeof response.code === "function") response.code(exception.getStatus()).send(body);
    else response.status(exception.getStatus()).json(body);
  }
}

@Controller("foreign")
@UseFilters(ForeignFilter)
class ForeignFilteredController {
  @Get("registered")
  registered() {
    throw new SafeException("USER_NOT_FOUND");
  }
}

@Module({
  imports: [SafeResponseModule.register({ errorCatalog: Errors, timestamp: false })],
  controllers: [ThrowingController, ForeignFilteredController],
})
class AppModule {}

for (const adapter of ADAPTERS) {
  describe(`SafeException of the Nest entry through the filter (${adapter})`, () => {
    let app: RunningApp;
    before(async () => app = await boot(AppModule, adapter));
    after(() => app.close());

    it("answers as the core SafeException does, and other interceptors see its status", async () => {
      StatusRecorder.seen = [];
      const nest = await getJson(app.url, "/x/nest");
      const core = await getJson(app.url, "/x/core");
      assert.equal(nest.status, 409);
      assert.deepEqual(nest.body.error, {
        code: "EMAIL_TAKEN",
        message: "a@b.c is taken",
        details: { field: "email" },
      });
      assert.deepEqual(nest.body, { ...core.body, path: "/x/nest" });
      assert.deepEqual(StatusRecorder.seen, [409, "unknown"]);
    });

    it("resolves a key without its catalog from the module's errorCatalog", async () => {
      StatusRecorder.seen = [];
      const { status, body } = await getJson(app.url, "/x/registered");
      assert.equal(status, 404);
      assert.deepEqual(body.error, { code: "USER_NOT_FOUND", message: "User not found" });
      // The app's own interceptor, which only calls getStatus(), sees the catalog status too.
      assert.deepEqual(StatusRecorder.seen, [404]);
    });

    it("gives a foreign exception filter the catalog status and body", async () => {
      const { status, body } = await getJson(app.url, "/foreign/registered");
      assert.equal(status, 404);
      assert.deepEqual(body, {
        foreign: true,
        statusCode: 404,
        code: "USER_NOT_FOUND",
        message: "User not found",
      });
    });
  });
}

describe("seed 0.15: createSafeException(catalog)", () => {
  it("makes a SafeException subclass bound to the catalog, its keys typed", () => {
    const AppException = createSafeException(Errors);
    const thrown = new AppException("EMAIL_TAKEN", { message: "Taken" });
    assert.ok(thrown instanceof SafeException);
    assert.ok(thrown instanceof HttpException);
    assert.ok(isSafeException(thrown));
    assert.equal(thrown.catalog, Errors);
    assert.equal(thrown.code, "EMAIL_TAKEN");
    assert.equal(thrown.getStatus(), 409);
    assert.deepEqual(thrown.getResponse(), {
      statusCode: 409,
      code: "EMAIL_TAKEN",
      message: "Taken",
      details: { field: "email" },
    });
    assert.throws(
      // @ts-expect-error: not a key of the catalog
      () => new AppException("NOPE"),
      /createSafeException: `NOPE` is not in the catalog/,
    );
    assert.throws(
      () => createSafeException({ USER_NOT_FOUND: { status: 404, message: "x" } } as never),
      /createSafeException: the catalog must be made by defineErrors\(\)/,
    );
  });

  it("takes a catalog of another copy of the library (an app loading the ESM and the CommonJS build)", async () => {
    const copy = await anotherCopy<typeof import("../../../safe_response/error_catalog.ts")>(
      "../../../safe_response/error_catalog.ts",
      import.meta.url,
    );
    const Theirs = copy.defineErrors({ GONE_ELSEWHERE: { status: 410, message: "Gone" } });
    assert.ok(!(Theirs instanceof ErrorCatalog), "another class");
    const AppException = createSafeException(Theirs);
    assert.equal(new AppException("GONE_ELSEWHERE").getStatus(), 410);
    // Thrown without its catalog, its status is still found among the defined ones.
    assert.equal(new SafeException("GONE_ELSEWHERE").getStatus(), 410);
  });
});
