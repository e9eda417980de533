import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  type ArgumentsHost,
  Catch,
  type ExceptionFilter,
  HttpException,
  type INestApplication,
} from "@nestjs/common";
import { ApiKeyHttpException, ApiKeysModule } from "../../../api_keys/nest/mod.ts";
import { appModule, boot, moduleOptions, PLATFORMS } from "./test_app.ts";

describe("ApiKeyHttpException", () => {
  it("is an HttpException with the status, a code property and a safe body", () => {
    const error = new ApiKeyHttpException("api_key_ip_not_allowed", 403, "not from here");
    assert.ok(error instanceof HttpException);
    assert.ok(error instanceof ApiKeyHttpException);
    assert.equal(error.getStatus(), 403);
    assert.equal(error.code, "api_key_ip_not_allowed");
    assert.deepEqual(error.getResponse(), {
      statusCode: 403,
      code: "api_key_ip_not_allowed",
      message: "not from here",
    });
    assert.ok(!(new HttpException("x", 401) instanceof ApiKeyHttpException));
  });
});

for (const platform of PLATFORMS) {
  describe(`ApiKeyHttpException over ${platform}`, () => {
    it("can be caught by an app filter with @Catch(ApiKeyHttpException)", async () => {
      @Catch(ApiKeyHttpException)
      class ApiKeyFilter implements ExceptionFilter {
        constructor(private readonly app: INestApplication) {}
        catch(exception: ApiKeyHttpException, host: ArgumentsHost) {
          this.app.getHttpAdapter().reply(
            host.switchToHttp().getResponse(),
            { caught: exception.code },
            exception.getStatus(),
          );
        }
      }
      const running = await boot(
        appModule(ApiKeysModule.forRoot(moduleOptions())),
        platform,
        undefined,
        (app) => app.useGlobalFilters(new ApiKeyFilter(app)),
      );
      try {
        const response = await running.request("/open");
        assert.deepEqual([response.status, response.body], [401, {
          caught: "api_key_missing",
        }]);
      } finally {
        await running.close();
      }
    });
  });
}
