/**
 * The Nest demo's limits on the public leak-report route
 * (`report_limits.ts`), counted per client IP (the demo's resolver) and
 * globally before the handler. A refusal sets `Retry-After` and `X-RateLimit-*` and answers 429.
 *
 * @module
 */
import { type CanActivate, type ExecutionContext, Inject, Injectable } from "@nestjs/common";
import { demoClientIpResolver } from "../client_ip.ts";
import { DemoHttpError } from "../http_error.ts";
import { DEMO_LEAK_REPORT_LIMITER } from "../tokens.ts";
import { LEAK_REPORT_REFUSAL, type LeakReportLimiter } from "./report_limits.ts";

/** Admits a public report, or throws the 429 (a `DemoHttpError`). */
@Injectable()
export class LeakReportLimitGuard implements CanActivate {
  constructor(@Inject(DEMO_LEAK_REPORT_LIMITER) private readonly limiter: LeakReportLimiter) {}

  /** Counts the report; throws the 429 once a limit is used up. */
  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const refusal = await this.limiter.admit(await demoClientIpResolver(http.getRequest()));
    if (refusal === undefined) return true;
    const response = http.getResponse<{ header(name: string, value: string): unknown }>();
    for (const [name, value] of Object.entries(refusal)) response.header(name, value);
    throw new DemoHttpError(429, LEAK_REPORT_REFUSAL);
  }
}
