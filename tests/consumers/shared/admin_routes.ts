// The settings page's admin routes (`createApiKeysAdminController`) behind `ApiKeysGuard`, in its
// own app: a rotation's body is read as sent as JSON, and one the framework leaves unparsed or
// parses otherwise (Express 4 gives an unparsed body as `{}`) or under a malformed JSON type is
// refused, never run with the rotation's defaults.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { type INestApplication, Module, type Type, UseGuards } from "@nestjs/common";
import { ApiKeysService, InMemoryApiKeyStorage } from "@saferoute/api-kit/api-keys";
import {
  ApiKeysGuard,
  ApiKeysModule,
  getApiKeyContext,
  RequireScope,
} from "@saferoute/api-kit/api-keys/nest";
import { createApiKeysAdminController } from "@saferoute/api-kit/api-keys/nest/admin";

const Admin = createApiKeysAdminController({
  path: "admin",
  decorators: [UseGuards(ApiKeysGuard), RequireScope("keys", "write")],
  scopes: ["orders:read"],
  tenantOf: (request) => getApiKeyContext(request)?.tenantId,
  callerKeyIdOf: (request) => getApiKeyContext(request)?.keyId,
  canManage: () => true,
});

@Module({
  imports: [
    ApiKeysModule.forRoot({
      peppers: { 1: "consumer-admin-pepper-0123456789abcdef" },
      storage: new InMemoryApiKeyStorage(),
      ttlPolicy: { allowNeverExpires: true },
    }),
  ],
  controllers: [Admin],
})
class AdminRoutesModule {}

/** A key managing `service`'s tenant "consumer" (the admin routes' caller). */
async function issueAdmin(service: ApiKeysService): Promise<string> {
  return (await service.create({
    tenantId: "consumer",
    name: "admin",
    scopes: [{ resource: "keys", level: "write" }, { resource: "orders", level: "read" }],
    expiresAt: null,
  })).key;
}

/** Registers the admin routes' checks against an app `createApp` makes. */
export function adminRoutesChecks(
  createApp: (module: Type<unknown>) => Promise<INestApplication>,
): void {
  describe("createApiKeysAdminController behind ApiKeysGuard", () => {
    let app: INestApplication;
    /** An Express app of the module whose first middleware reads every body before the parser. */
    let drained: INestApplication | undefined;
    let admin = "";
    /** The admin routes' URL of `on`. */
    const urlOf = (on: INestApplication) =>
      `http://127.0.0.1:${on.getHttpServer().address().port}/admin`;
    before(async () => {
      app = await createApp(AdminRoutesModule);
      await app.listen(0, "127.0.0.1");
      admin = await issueAdmin(app.get(ApiKeysService));
      if (app.getHttpAdapter().getType() === "express") {
        drained = await createApp(AdminRoutesModule);
        // Added before init, so ahead of Nest's body parser (a raw-body logger, say).
        drained.use((request: NodeJS.ReadableStream, _: unknown, next: () => void) => {
          request.on("end", next).resume();
        });
        await drained.listen(0, "127.0.0.1");
      }
    });
    after(async () => {
      await app?.close();
      await drained?.close();
    });

    const rotate = async (type: string, body: string, on = app) => {
      const url = urlOf(on);
      const service = on.get(ApiKeysService);
      const target = await service.create({
        tenantId: "consumer",
        name: "leaked",
        scopes: [{ resource: "orders", level: "read" }],
        expiresAt: null,
      });
      const response = await fetch(`${url}/keys/${target.id}/rotate`, {
        method: "POST",
        headers: {
          "x-api-key": on === app ? admin : await issueAdmin(service),
          "x-requested-with": "api-keys-manager",
          "content-type": type,
        },
        body,
      });
      const answer = JSON.parse(await response.text());
      const stillValid = await service.verify(target.key).then(() => true, () => false);
      return { status: response.status, answer, stillValid };
    };

    it("a rotate sent as JSON with no grace ends the old key at once", async () => {
      const { status, answer, stillValid } = await rotate("application/json", '{"grace":"none"}');
      assert.equal(status, 201, JSON.stringify(answer));
      assert.equal(stillValid, false);
    });

    it("a rotate body under a malformed JSON type (application/json; charset) is refused, never run with the defaults", async () => {
      // body-parser 1 (Express 4) leaves it unparsed, as {}; Fastify 4 refuses it itself (415);
      // later parsers read it.
      const { status, answer, stillValid } = await rotate(
        "application/json; charset",
        '{"grace":"none"}',
      );
      assert.equal(stillValid, true, "not rotated");
      if (status !== 415) {
        assert.deepEqual([status, answer.error?.details?.field], [400, "body"]);
      }
    });

    it("a rotate body under a malformed JSON type read by a middleware ahead of the parser (Express) is refused, never run with the defaults", async (t) => {
      if (drained === undefined) return t.skip("Express only: middleware ahead of its parser");
      // Express 4's body-parser 1 leaves it unparsed as {} on a stream another reader ended.
      const { status, answer, stillValid } = await rotate(
        "application/json; charset",
        '{"grace":"none"}',
        drained,
      );
      assert.deepEqual([status, answer.error?.details?.field, stillValid], [400, "body", true]);
    });

    it("a rotate body sent as text is refused (400 on body); the key is not rotated", async () => {
      const { status, answer, stillValid } = await rotate("text/plain", '{"grace":"none"}');
      assert.equal(status, 400, JSON.stringify(answer));
      assert.equal(answer.error.details.field, "body");
      assert.equal(stillValid, true);
    });
  });
}
