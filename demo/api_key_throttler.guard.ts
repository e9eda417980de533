/**
 * `@nestjs/throttler` counting requests per API key, not per IP: it runs
 * after `ApiKeysGuard` (list it second in `@UseGuards`) and tracks the
 * verified key id. Its `X-RateLimit-*` headers are what the safe-response
 * module mirrors into `meta.rateLimit`.
 *
 * @module
 */
import { type ExecutionContext, Injectable } from "@nestjs/common";
import { ThrottlerGuard, type ThrottlerLimitDetail } from "@nestjs/throttler";
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

  /**
   * The refusal carries the refusing policy's `X-RateLimit-*` headers (the
   * throttler sets only `Retry-After`), so `meta.rateLimit` shows this limit,
   * not the key's own policy mirrored earlier in the request.
   */
  protected override throwThrottlingException(
    context: ExecutionContext,
    detail: ThrottlerLimitDetail,
  ): Promise<void> {
    const { res } = this.getRequestResponse(context);
    this.setResponseHeader(res, `${this.headerPrefix}-Limit`, detail.limit);
    this.setResponseHeader(res, `${this.headerPrefix}-Remaining`, 0);
    this.setResponseHeader(res, `${this.headerPrefix}-Reset`, detail.timeToBlockExpire);
    return super.throwThrottlingException(context, detail);
  }
}
