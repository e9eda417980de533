/**
 * The application's functions given to the module (options, the i18n
 * service, the nestjs-cls store) throwing, rejecting with an `Error` or
 * rejecting with a non-`Error`, on Express and Fastify: the mappers, the date
 * formatter and the transform give a generic 500 without internals;
 * translation falls back to the untranslated message; context and version
 * lookups leave their field out. Never an unhandled rejection.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { Controller, Get, Module, NotFoundException, Post, Res, UseGuards } from "@nestjs/common";
import { ClsModule, ClsService } from "nestjs-cls";
import { I18nModule, I18nService, QueryResolver } from "nestjs-i18n";
import type { I18nAdapter } from "../../../safe_response/mod.ts";
import { ResponseMessage, SafeResponseModule } from "../../../safe_response/nest/mod.ts";
import { collectUnhandledRejections } from "../../reliability/harness.ts";
import { ADAPTERS, boot, CapturingLogger, headerDenyGuard, type RunningApp } from "./helpers.ts";

const SECRET = "callback-internal-4f1d.db.local";

const KINDS = ["throws", "rejects with an Error", "rejects with a non-Error"] as const;
type Kind = (typeof KINDS)[number];

/** What a failing function does: throw, or return a promise that rejects. */
function failure(kind: Kind): never {
  if (kind === "throws") throw new TypeError(`${SECRET} (thrown)`);
  const reason = kind === "rejects with an Error" ? new Error(SECRET) : `${SECRET} (a string)`;
  return Promise.reject(reason) as never;
}

/** The function currently failing, and how. */
let failing: { name: string; kind: Kind } | undefined;

/** Fails when `name` is the function currently failing; else returns `value`. */
function unless<T>(name: string, value: T): T {
  return failing?.name === name ? failure(failing.kind) : value;
}

/** Unhandled rejections seen by the test process (stopped from failing the run). */
const unhandled = collectUnhandledRejections().reasons;

/** Lets pending rejections surface (they are reported after the microtasks drain). */
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

/** Runs `test` with `name` failing as `kind`, from a clean slate. */
async function withFailure(name: string, kind: Kind, test: () => Promise<void>): Promise<void> {
  await settle();
  unhandled.length = 0; // an earlier failed test's leftovers stay with it
  failing = { name, kind };
  try {
    await test();
  } finally {
    failing = undefined;
    storeFailsOnce = undefined;
  }
}

interface Answer {
  status: number;
  text: string;
  body: Record<string, unknown>;
}

/** Sends a request, then lets pending rejections surface before returning. */
async function request(app: RunningApp, path: string, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(app.url + path, init);
  const text = await response.text();
  await settle();
  return { status: response.status, text, body: JSON.parse(text) };
}

function assertNoUnhandledRejection(what: string): void {
  assert.deepEqual(unhandled.splice(0), [], `${what}: unhandled rejection`);
}

function assertGeneric500(answer: Answer, what: string): void {
  assert.equal(answer.status, 500, `${what}: ${answer.text}`);
  assert.equal(answer.body.statusCode, 500, what);
  assert.deepEqual(answer.body.error, {
    code: "INTERNAL_SERVER_ERROR",
    message: "Internal Server Error",
  }, what);
  assert.ok(!answer.text.includes(SECRET), `${what}: internals leaked`);
}

@Controller("cb")
class OptionsController {
  @Get("ok")
  ok() {
    return { ok: true };
  }

  @Get("fresh-0")
  fresh0() {
    return 0;
  }

  @Get("fresh-1")
  fresh1() {
    return 1;
  }

  @Get("fresh-2")
  fresh2() {
    return 2;
  }

  @Post("accepted")
  accepted(@Res({ passthrough: true }) response: { status(code: number): unknown }) {
    response.status(202); // a status other than the route's: the mapper runs per request
    return { queued: true };
  }

  @Get("missing")
  missing() {
    throw new NotFoundException("Nope");
  }
}

@Module({
  imports: [
    SafeResponseModule.register({
      errorCodeMapper: (_exception, { defaultCode }) => unless("errorCodeMapper", defaultCode),
      successCodeMapper: (status) => unless("successCodeMapper", `S_${status}`),
      dateFormatter: (date) => unless("dateFormatter", date.toISOString()),
      transformResponse: (data) => unless("transformResponse", data),
      version: () => unless("version", "2024-06-01"),
    }),
  ],
  controllers: [OptionsController],
})
class OptionsModule {}

/** Requests that make each option run, after which it is left alone. */
const OPTION_REQUESTS: [name: string, path: (kind: number) => string, init?: RequestInit][] = [
  ["errorCodeMapper", () => "/cb/missing"],
  ["successCodeMapper", () => "/cb/accepted", { method: "POST" }],
  ["successCodeMapper", (kind) => `/cb/fresh-${kind}`], // read when the route's plan is built
  ["dateFormatter", () => "/cb/ok"],
  ["dateFormatter", () => "/cb/missing"],
  ["transformResponse", () => "/cb/ok"],
];

const Deny = headerDenyGuard(() => new NotFoundException("messages.not_found"));

@Controller("i18n")
@UseGuards(Deny)
class I18nController {
  @Get("created")
  @ResponseMessage("messages.created")
  created() {
    return { id: 1 };
  }

  @Get("missing")
  missing() {
    throw new NotFoundException("messages.not_found");
  }
}

@Module({
  imports: [
    I18nModule.forRoot({
      fallbackLanguage: "en",
      loaderOptions: {
        path: fileURLToPath(new URL("./fixtures/i18n/", import.meta.url)),
        watch: false,
      },
      resolvers: [new QueryResolver(["lang"])],
    }),
    SafeResponseModule.register({ i18n: true }),
  ],
  controllers: [I18nController],
})
class RealI18nModule {}

const failingAdapter: I18nAdapter = {
  translate: (key, options) => unless("translate", `${options?.lang}:${key}`),
  resolveLanguage: () => unless("resolveLanguage", "fr"),
};

@Module({
  imports: [SafeResponseModule.register({ i18n: failingAdapter })],
  controllers: [I18nController],
})
class AdapterI18nModule {}

/** Set by the `/ctx/store-fails` handler: the next store read (the module's) fails. */
let storeFailsOnce: Kind | undefined;

@Controller("ctx")
class ContextController {
  @Get()
  get() {
    return "with context";
  }

  @Get("missing")
  missing() {
    throw new NotFoundException();
  }

  @Get("store-fails")
  storeFails() {
    storeFailsOnce = failing!.kind;
    return "store read fails";
  }
}

@Module({
  imports: [
    ClsModule.forRoot({
      global: true,
      middleware: {
        mount: true,
        setup: (cls) => {
          cls.set("traceId", "trace-1");
          Object.defineProperty(cls.get(), "hostile", {
            enumerable: true,
            get() {
              throw new Error(SECRET);
            },
          });
        },
      },
    }),
    SafeResponseModule.register({
      context: {
        fields: { traceId: "traceId", hostile: "hostile" },
        resolver: (store) => unless("resolver", { fromResolver: store.traceId }),
      },
    }),
  ],
  controllers: [ContextController],
})
class ClsAppModule {}

for (const adapter of ADAPTERS) {
  describe(`option functions that fail (${adapter})`, () => {
    let app: RunningApp;
    const logger = new CapturingLogger();
    before(async () => {
      app = await boot(OptionsModule, adapter, { logger });
    });
    after(() => app.close());

    it("work when they do not fail", async () => {
      await settle();
      unhandled.length = 0;
      const ok = await request(app, "/cb/ok");
      assert.equal(ok.status, 200);
      assert.equal(ok.body.code, "S_200");
      assert.deepEqual(ok.body.meta, { apiVersion: "2024-06-01" });
      const accepted = await request(app, "/cb/accepted", { method: "POST" });
      assert.deepEqual([accepted.status, accepted.body.code], [202, "S_202"]);
      assert.equal((await request(app, "/cb/missing")).status, 404);
      assertNoUnhandledRejection("no failure");
    });

    for (const [name, path, init] of OPTION_REQUESTS) {
      KINDS.forEach((kind, index) => {
        it(`${name} ${kind} (${path(index)}): a generic 500, logged`, async () => {
          logger.entries.length = 0;
          await withFailure(name, kind, async () => {
            const answer = await request(app, path(index), init);
            assertGeneric500(answer, `${name} ${kind}`);
            assert.ok(logger.find("error", name).length >= 1, `${name}: not logged`);
            assertNoUnhandledRejection(`${name} ${kind}`);
          });
          assert.ok((await request(app, path(index), init)).status < 500, "recovers");
        });
      });
    }

    for (const kind of KINDS) {
      it(`version ${kind}: no meta.apiVersion, logged`, async () => {
        logger.entries.length = 0;
        await withFailure("version", kind, async () => {
          const answer = await request(app, "/cb/ok");
          assert.equal(answer.status, 200);
          assert.equal(answer.body.meta, undefined);
          assert.ok(logger.find("error", "version").length >= 1, "not logged");
          assertNoUnhandledRejection(`version ${kind}`);
        });
      });
    }
  });

  describe(`translation that fails (${adapter})`, () => {
    const original = I18nService.prototype.translate;
    before(() => {
      I18nService.prototype.translate = function (this: I18nService, ...args) {
        return unless("translate", original.apply(this, args));
      } as typeof original;
    });
    after(() => {
      I18nService.prototype.translate = original;
    });

    for (const kind of KINDS) {
      it(`nestjs-i18n translate ${kind}: the untranslated message, logged`, async () => {
        const logger = new CapturingLogger();
        const app = await boot(RealI18nModule, adapter, { logger });
        try {
          const translated = await request(app, "/i18n/created?lang=fr");
          assert.equal((translated.body.meta as { message: string }).message, "Élément créé");
          await withFailure("translate", kind, async () => {
            const created = await request(app, "/i18n/created?lang=fr");
            assert.equal(created.status, 200);
            assert.equal((created.body.meta as { message: string }).message, "messages.created");
            const missing = await request(app, "/i18n/missing?lang=fr");
            assert.equal(missing.status, 404);
            assert.equal(
              (missing.body.error as { message: string }).message,
              "messages.not_found",
            );
            const guarded = await request(app, "/i18n/created?lang=fr", {
              headers: { "x-deny": "1" },
            });
            assert.equal(
              (guarded.body.error as { message: string }).message,
              "messages.not_found",
            );
            assert.ok(!created.text.includes(SECRET) && !missing.text.includes(SECRET));
            assert.ok(logger.find("error", "translat").length >= 1, "not logged");
            assertNoUnhandledRejection(`translate ${kind}`);
          });
        } finally {
          await app.close();
        }
      });
    }

    it("an I18nAdapter whose translate or resolveLanguage fails: the untranslated message", async () => {
      const app = await boot(AdapterI18nModule, adapter, { logger: new CapturingLogger() });
      try {
        const ok = await request(app, "/i18n/created");
        assert.equal((ok.body.meta as { message: string }).message, "fr:messages.created");
        for (const name of ["translate", "resolveLanguage"]) {
          for (const kind of KINDS) {
            await withFailure(name, kind, async () => {
              const created = await request(app, "/i18n/created");
              assert.equal(created.status, 200);
              assert.equal(
                (created.body.meta as { message: string }).message,
                "messages.created",
                `${name} ${kind}`,
              );
              const missing = await request(app, "/i18n/missing");
              assert.equal(missing.status, 404);
              assert.equal(
                (missing.body.error as { message: string }).message,
                "messages.not_found",
              );
              assertNoUnhandledRejection(`${name} ${kind}`);
            });
          }
        }
      } finally {
        await app.close();
      }
    });
  });

  describe(`request-context lookups that fail (${adapter})`, () => {
    const original = ClsService.prototype.get;
    let app: RunningApp;
    const logger = new CapturingLogger();
    before(async () => {
      ClsService.prototype.get = function (this: ClsService, ...args: unknown[]) {
        const kind = storeFailsOnce;
        storeFailsOnce = undefined;
        return kind === undefined
          ? (original as (...a: unknown[]) => unknown).apply(this, args)
          : failure(kind);
      } as typeof original;
      app = await boot(ClsAppModule, adapter, { logger });
    });
    after(async () => {
      ClsService.prototype.get = original;
      await app.close();
    });

    it("a store value whose getter throws is left out; the others stay", async () => {
      await settle();
      unhandled.length = 0;
      for (const path of ["/ctx", "/ctx/missing"]) {
        const answer = await request(app, path);
        assert.ok(answer.status === 200 || answer.status === 404, path);
        assert.deepEqual(answer.body.meta, { traceId: "trace-1", fromResolver: "trace-1" }, path);
        assert.ok(!answer.text.includes(SECRET));
      }
      assertNoUnhandledRejection("hostile getter");
    });

    for (const kind of KINDS) {
      it(`the resolver ${kind}: its fields are left out, logged`, async () => {
        logger.entries.length = 0;
        await withFailure("resolver", kind, async () => {
          for (const path of ["/ctx", "/ctx/missing"]) {
            const answer = await request(app, path);
            assert.ok(answer.status === 200 || answer.status === 404, path);
            assert.deepEqual(answer.body.meta, { traceId: "trace-1" }, path);
          }
          assert.ok(logger.find("error", "resolver").length >= 1, "not logged");
          assertNoUnhandledRejection(`resolver ${kind}`);
        });
      });

      it(`reading the store ${kind}: no context fields, logged`, async () => {
        logger.entries.length = 0;
        await withFailure("none", kind, async () => {
          const answer = await request(app, "/ctx/store-fails");
          assert.equal(answer.status, 200);
          assert.equal(answer.body.meta, undefined);
          assert.ok(logger.find("error", "context").length >= 1, "not logged");
          assertNoUnhandledRejection(`store ${kind}`);
        });
      });
    }
  });
}
