import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import {
  Controller,
  ForbiddenException,
  Get,
  Module,
  NotFoundException,
  UseGuards,
} from "@nestjs/common";
import { AcceptLanguageResolver, I18nModule, QueryResolver } from "nestjs-i18n";
import type { I18nAdapter } from "../../../safe_response/mod.ts";
import { ResponseMessage, SafeResponseModule } from "../../../safe_response/nest/mod.ts";
import { ADAPTERS, boot, CapturingLogger, getJson, headerDenyGuard } from "./helpers.ts";

const DenyGuard = headerDenyGuard(() => new ForbiddenException("messages.forbidden"));

@Controller("i18n")
@UseGuards(DenyGuard)
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

const i18nModule = I18nModule.forRoot({
  fallbackLanguage: "en",
  loaderOptions: {
    path: fileURLToPath(new URL("./fixtures/i18n/", import.meta.url)),
    watch: false,
  },
  resolvers: [new QueryResolver(["lang"]), AcceptLanguageResolver],
});

@Module({
  imports: [i18nModule, SafeResponseModule.register({ i18n: true, problemDetails: false })],
  controllers: [I18nController],
})
class AutoI18nModule {}

const shouting: I18nAdapter = {
  translate: (key, options) => `${options?.lang ?? "??"}:${key.toUpperCase()}`,
  resolveLanguage: (request) => (request as { headers: Record<string, string> }).headers["x-lang"],
};

@Module({
  imports: [SafeResponseModule.register({ i18n: shouting })],
  controllers: [I18nController],
})
class AdapterModule {}

@Module({
  imports: [SafeResponseModule.register({ i18n: true })],
  controllers: [I18nController],
})
class WithoutI18nModule {}

const messageOf = (body: Record<string, unknown>) => (body.error as { message: string }).message;

for (const adapter of ADAPTERS) {
  describe(`i18n (${adapter})`, () => {
    it("finds the app's nestjs-i18n service and translates in the request's language", async () => {
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
        assert.equal(messageOf((await getJson(url, "/i18n/missing")).body), "Item not found");
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

    it("uses a custom I18nAdapter", async () => {
      const { url, close } = await boot(AdapterModule, adapter);
      try {
        const { body } = await getJson(url, "/i18n/created", { headers: { "x-lang": "de" } });
        assert.equal((body.meta as { message: string }).message, "de:MESSAGES.CREATED");
      } finally {
        await close();
      }
    });

    it("works without nestjs-i18n in the application (one warning, no translation)", async () => {
      const logger = new CapturingLogger();
      const { url, close } = await boot(WithoutI18nModule, adapter, { logger });
      try {
        assert.equal(logger.find("warn", "no nestjs-i18n I18nService found").length, 1);
        const { body } = await getJson(url, "/i18n/created?lang=fr");
        assert.equal((body.meta as { message: string }).message, "messages.created");
      } finally {
        await close();
      }
    });
  });
}
