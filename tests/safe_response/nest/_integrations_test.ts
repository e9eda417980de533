/**
 * The optional integrations found in the application's container:
 * nestjs-cls's `ClsService` (option `context`) and nestjs-i18n's
 * `I18nService` (option `i18n: true`), on Express and Fastify, and the
 * warning when one is missing; class-transformer's `ClassSerializerInterceptor`
 * around field selection.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import {
  ClassSerializerInterceptor,
  Controller,
  ForbiddenException,
  Get,
  Module,
  NotFoundException,
  UseGuards,
} from "@nestjs/common";
import { APP_INTERCEPTOR, type ModulesContainer } from "@nestjs/core";
import { Exclude } from "class-transformer";
import { ClsModule } from "nestjs-cls";
import { AcceptLanguageResolver, I18nModule, QueryResolver } from "nestjs-i18n";
import { resolveSettings, type ResponderHooks } from "../../../safe_response/mod.ts";
import { discoverIntegrations } from "../../../safe_response/nest/_integrations.ts";
import {
  Paginated,
  ResponseMessage,
} from "../../../safe_response/nest/safe_response.decorators.ts";
import { SafeResponseModule } from "../../../safe_response/nest/safe_response.module.ts";
import { ADAPTERS, boot, CapturingLogger, getJson, headerDenyGuard } from "./helpers.ts";

/** A container holding `providers` (class token name and instance) in one module. */
function container(providers: Array<[name: string, instance: unknown]>): ModulesContainer {
  const wrappers = new Map(
    providers.map(([name, instance]) => [name, { token: { [name]: class {} }[name], instance }]),
  );
  return new Map([["AppModule", { providers: wrappers }]]) as unknown as ModulesContainer;
}

describe("discoverIntegrations", () => {
  it("finds the services by their class name, and warns for each one missing", () => {
    const settings = resolveSettings({ i18n: true, context: { fields: { traceId: "trace" } } });
    const warnings: string[] = [];
    const logger = { warn: (line: string) => warnings.push(line), error: () => {} };
    const hooks: ResponderHooks = {};
    const cls = {
      get: function (this: unknown) {
        return this === cls ? { trace: "t-1" } : undefined;
      },
    };
    const i18n = { translate: (key: string) => `t:${key}` };
    discoverIntegrations(
      container([["ClsService", cls], ["I18nService", i18n], ["Other", {}]]),
      settings,
      hooks,
      logger,
    );
    assert.deepEqual(hooks.store?.(), { trace: "t-1" }); // bound to the service
    assert.equal(hooks.i18n?.translate("k"), "t:k");
    assert.deepEqual(warnings, []);
    const empty: ResponderHooks = {};
    discoverIntegrations(container([["ClsService", { get: 1 }]]), settings, empty, logger);
    assert.deepEqual(empty, {});
    assert.deepEqual(warnings, [
      "option `i18n: true`: no nestjs-i18n I18nService found; messages are not translated",
      "option `context`: no nestjs-cls ClsService found; context meta is off",
    ]);
    discoverIntegrations(container([]), resolveSettings(), empty, logger);
    assert.equal(warnings.length, 2, "nothing asked, nothing looked for");
  });
});

const DenyGuard = headerDenyGuard(() => new ForbiddenException());

@Controller("ctx")
@UseGuards(DenyGuard)
class ContextController {
  @Get()
  get() {
    return "with context";
  }

  @Get("missing")
  missing() {
    throw new NotFoundException();
  }

  @Get("page")
  @Paginated()
  page() {
    return { data: [], total: 0, page: 1, limit: 5 };
  }
}

@Module({
  imports: [
    ClsModule.forRoot({
      global: true,
      middleware: {
        mount: true,
        setup: (cls, request: { headers: Record<string, string> }) => {
          cls.set("traceId", request.headers["x-trace-id"]);
          cls.set("tenantId", "tenant-7");
        },
      },
    }),
    SafeResponseModule.register({
      context: {
        fields: { traceId: "traceId", tenantCopy: "tenantId" },
        // A built-in meta name from the resolver is left out (never overriding the module's meta).
        resolver: (store) => ({
          tenant: store.tenantId,
          pagination: store.tenantId,
          absent: undefined,
        }),
      },
    }),
  ],
  controllers: [ContextController],
})
class ClsAppModule {}

@Module({
  imports: [SafeResponseModule.register({ context: { fields: { traceId: "traceId" } } })],
  controllers: [ContextController],
})
class NoClsModule {}

for (const adapter of ADAPTERS) {
  describe(`request context through nestjs-cls (${adapter})`, () => {
    it("copies store values into meta on successes and errors, guard errors included", async () => {
      const { url, close } = await boot(ClsAppModule, adapter);
      try {
        const headers = { "x-trace-id": "trace-123" };
        const ok = await getJson(url, "/ctx", { headers });
        assert.deepEqual(ok.body.meta, {
          traceId: "trace-123",
          tenantCopy: "tenant-7",
          tenant: "tenant-7",
        });
        const missing = await getJson(url, "/ctx/missing", { headers });
        assert.deepEqual(missing.body.meta, {
          traceId: "trace-123",
          tenantCopy: "tenant-7",
          tenant: "tenant-7",
        });
        const guarded = await getJson(url, "/ctx", { headers: { ...headers, "x-deny": "1" } });
        assert.equal(guarded.status, 403);
        assert.equal((guarded.body.meta as Record<string, unknown>).traceId, "trace-123");
        const page = await getJson(url, "/ctx/page", { headers });
        const meta = page.body.meta as Record<string, unknown>;
        assert.equal(
          (meta.pagination as { type: string }).type,
          "offset",
          "context never overrides meta",
        );
        assert.equal(meta.traceId, "trace-123");
      } finally {
        await close();
      }
    });

    it("warns and stays off without nestjs-cls in the application", async () => {
      const logger = new CapturingLogger();
      const { url, close } = await boot(NoClsModule, adapter, { logger });
      try {
        assert.equal(logger.find("warn", "no nestjs-cls ClsService found").length, 1);
        assert.equal((await getJson(url, "/ctx")).body.meta, undefined);
      } finally {
        await close();
      }
    });
  });
}

const DenyI18n = headerDenyGuard(() => new ForbiddenException("messages.forbidden"));

@Controller("i18n")
@UseGuards(DenyI18n)
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

  @Get("untranslated")
  untranslated() {
    throw new NotFoundException("Plain message");
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
      resolvers: [new QueryResolver(["lang"]), AcceptLanguageResolver],
    }),
    SafeResponseModule.register({ i18n: true }),
  ],
  controllers: [I18nController],
})
class AutoI18nModule {}

const messageOf = (body: Record<string, unknown>) => (body.error as { message: string }).message;

for (const adapter of ADAPTERS) {
  describe(`i18n through nestjs-i18n (${adapter})`, () => {
    it("translates in the language nestjs-i18n resolved, guard errors included", async () => {
      const { url, close } = await boot(AutoI18nModule, adapter);
      try {
        const en = await getJson(url, "/i18n/created");
        assert.equal((en.body.meta as { message: string }).message, "Item created");
        const fr = await getJson(url, "/i18n/created?lang=fr");
        assert.equal((fr.body.meta as { message: string }).message, "Élément créé");
        const frHeader = await getJson(url, "/i18n/missing", {
          headers: { "accept-language": "fr" },
        });
        assert.equal(messageOf(frHeader.body), "Élément introuvable");
        const guarded = await getJson(url, "/i18n/created?lang=fr", { headers: { "x-deny": "1" } });
        assert.equal(messageOf(guarded.body), "Accès refusé");
        assert.equal(
          messageOf((await getJson(url, "/i18n/untranslated?lang=fr")).body),
          "Plain message",
        );
      } finally {
        await close();
      }
    });
  });
}

class Address {
  city = "London";
  @Exclude()
  internalNote = "vip";
}

class User {
  id = "u1";
  name = "Ada";
  @Exclude()
  passwordHash = "$argon2id$secret";
  address = new Address();
}

@Controller("users")
class UsersController {
  @Get("me")
  me(): User {
    return new User();
  }
}

/** The serializer as Nest's docs register it: an `APP_INTERCEPTOR`, outside the module's interceptor. */
@Module({
  imports: [SafeResponseModule.register({ timestamp: false, fieldSelection: true })],
  controllers: [UsersController],
  providers: [{ provide: APP_INTERCEPTOR, useClass: ClassSerializerInterceptor }],
})
class SerializedModule {}

for (const adapter of ADAPTERS) {
  describe(`field selection under ClassSerializerInterceptor (${adapter})`, () => {
    it("a field @Exclude hides stays hidden when selected, at any depth", async () => {
      const { url, close } = await boot(SerializedModule, adapter);
      try {
        const whole = await getJson(url, "/users/me");
        assert.deepEqual(whole.body.data, { id: "u1", name: "Ada", address: { city: "London" } });
        const picked = await getJson(url, "/users/me?fields=id,passwordHash,address.internalNote");
        assert.deepEqual(picked.body.data, { id: "u1", address: {} });
      } finally {
        await close();
      }
    });
  });
}
