/**
 * `@nestjs/throttler` counting requests per API key, not per IP: it runs
 * after `ApiKeysGuard` (list it second in `@UseGuards`) and tracks the
 * verified key id. Its `X-RateLimit-*` headers are what the safe-response
 * module mirrors into `meta.rateLimit`.
 *
 * @module
 */
import { Injectable } from "@nestjs/common";
import { ThrottlerGuard } from "@nestjs/throttler";
import { getApiKeyContext } from "../api_keys/nest/mod.ts";

/** Throttler guard whose tracker is the verified API key. */
@Injectable()
export class ApiKeyThrottlerGuard extends ThrottlerGuard {
  /** `key:<id>` of the verified key; the client IP only if no key was verified. */
  // deno-lint-ignore no-explicit-any
  protected override getTracker(request: Record<string, any>): Promise<string> {
    const apiKey = getApiKeyContext(request);
    return Promise.resolve(apiKey ? `key:${apiKey.keyId}` : `ip:${request.ip}`);
  }
}
