// The settings page's admin routes (`createApiKeysAdminController`) behind `ApiKeysGuard`, in its
// own app: a rotation's body is read as sent as JSON, and one the framework leaves unparsed or
// parses otherwise (Express 4 gives an unparsed body as `{}`) is refused, never run with the
// rotation's defaults.
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

/** Registers the admin routes' checks against an app `createApp` makes. */
export function adminRoutesChecks(
  createApp: (module: Type<unknown>) => Promise<INestApplication>,
): void {
  describe("createApiKeysAdminController behind ApiKeysGuard", () => {
    let app: INestApplication;
    let url = "";
    let admin = "";
    before(async () => {
      app = await createApp(AdminRoutesModule);
      await app.listen(0, "127.0.0.1");
      url = `http://127.0.0.1:${app.getHttpServer().address().port}/admin`;
      admin = (await app.get(ApiKeysService).create({
        tenantId: "consumer",
        name: "admin",
        scopes: [{ resource: "keys", level: "write" }, { resource: "orders", level: "read" }],
        expiresAt: null,
      })).key;
    });
    after(async () => {
      await app?.close();
    });

    const rotate = async (type: string, body: string) => {
      const service = app.get(ApiKeysService);
      const target = await service.create({
        tenantId: "consumer",
        name: "leaked",
        scopes: [{ resource: "orders", level: "read" }],
        expiresAt: null,
      });
      const response = await fetch(`${url}/keys/${target.id}/rotate`, {
        method: "POST",
        headers: {
          "x-api-key": admin,
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

    it("a rotate body under a JSON type the parser refuses (application/json; charset) is read as sent or refused, never run with the defaults", async () => {
      // body-parser 1 (Express 4) leaves it unparsed, as {}; later ones read it.
      const { status, answer, stillValid } = await rotate(
        "application/json; charset",
        '{"grace":"none"}',
      );
      if (status === 201) assert.equal(stillValid, false, "read: no grace");
      else assert.deepEqual([[400, 415].includes(status), stillValid], [true, true]);
      assert.ok(status !== 201 || answer.replacedKeyId, JSON.stringify(answer));
    });

    it("a rotate body sent as text is refused (400 on body); the key is not rotated", async () => {
      const { status, answer, stillValid } = await rotate("text/plain", '{"grace":"none"}');
      assert.equal(status, 400, JSON.stringify(answer));
      assert.equal(answer.error.details.field, "body");
      assert.equal(stillValid, true);
    });
  });
}
