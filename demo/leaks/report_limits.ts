/**
 * The limits of the public leak-report route, for both demos: one policy per
 * client (its IP) and one global policy, checked together, all or nothing, by
 * the library's rate limiter (`./rate-limits`, in-memory store; the `subjects`
 * option counts the global one on a subject all clients share) before the
 * handler. A refusal is a 429 with `Retry-After`.
 *
 * @module
 */
import { isIP } from "node:net";
import { compileRateLimitPolicies, createRateLimiter } from "../../rate_limits/mod.ts";

/** Reports accepted per window: from one client, and from all clients together. */
export interface LeakReportLimits {
  /** Reports per client IP and window. */
  perClient: number;
  /** Reports per window from everyone. */
  global: number;
  /** The window, in ms. */
  windowMs: number;
}

/** The demos' limits: 10 reports a minute per client, 300 in all (the handler queues 1,000). */
export const LEAK_REPORT_LIMITS: LeakReportLimits = {
  perClient: 10,
  global: 300,
  windowMs: 60_000,
};

/** The body of the 429 (a `DemoHttpError` body). */
export const LEAK_REPORT_REFUSAL = {
  code: "TOO_MANY_REQUESTS",
  message: "Too many leak reports: wait for the window to reset",
} as const;

/** Counts the public reports. */
export interface LeakReportLimiter {
  /**
   * Counts one report of `clientIp`: `undefined` when admitted, else the 429's
   * headers (`Retry-After` and `X-RateLimit-*` of the policy that waits longest).
   */
  admit(clientIp: string | undefined): Promise<Record<string, string> | undefined>;
}

/** The global policy's subject, shared by every client. */
const GLOBAL = "global";
/** One subject for every client whose address is missing or unreadable. */
const UNREADABLE = "ip:unreadable";

/** Builds the limiter (throws a `TypeError` for a bad limit). */
export function createLeakReportLimiter(limits = LEAK_REPORT_LIMITS): LeakReportLimiter {
  const limiter = createRateLimiter({ logger: () => {} });
  const policies = compileRateLimitPolicies([
    { name: "client", limit: limits.perClient, windowMs: limits.windowMs },
    { name: GLOBAL, limit: limits.global, windowMs: limits.windowMs },
  ]);
  return {
    async admit(clientIp) {
      const subject = typeof clientIp === "string" && clientIp.length <= 64 && isIP(clientIp)
        ? `ip:${clientIp}`
        : UNREADABLE;
      const result = await limiter.check(subject, policies, { subjects: [subject, GLOBAL] });
      if (result.allowed) return undefined;
      const refused = result.policies.filter((p) => !p.allowed)
        .reduce((a, b) => (b.resetMs > a.resetMs ? b : a));
      const seconds = String(Math.max(1, Math.ceil(refused.resetMs / 1000)));
      return {
        "Retry-After": seconds,
        "X-RateLimit-Limit": String(refused.limit),
        "X-RateLimit-Remaining": "0",
        "X-RateLimit-Reset": seconds,
      };
    },
  };
}
