/**
 * The leaked-key handlers over a Web `Request`: the raw body is read up to one
 * byte past the handler's `maxBodyBytes` (the rest is never read), headers
 * come from `request.headers`.
 *
 * @module
 */
import type { LeakReportHandler, LeakReportRequest } from "../leaks/types.ts";
import { readBounded } from "./_bounded_body.ts";

/**
 * Turns a leaked-key handler (`createSecretScanningPartnerHandler` or
 * `createPublicRevocationHandler` of `./api-keys`) into a Fetch handler. The
 * body is read raw (the partner signature covers the exact bytes) and bounded:
 * at most `maxBodyBytes + 1` bytes, so a larger body gets the handler's own
 * answer (413 from the partner handler, the usual 202 from the public one). A
 * body that cannot be read is handled as an empty one.
 *
 * @example
 * ```ts
 * import {
 *   ApiKeysService,
 *   createPublicRevocationHandler,
 *   createSecretScanningPartnerHandler,
 *   githubSecretScanningKeyResolver,
 *   InMemoryApiKeyStorage,
 * } from "@saferoute/api-kit/api-keys";
 * import { createLeakReportFetchHandler } from "@saferoute/api-kit/api-keys/fetch";
 *
 * const service = new ApiKeysService({
 *   peppers: { 1: "a-pepper-of-at-least-thirty-two-bytes" },
 *   storage: new InMemoryApiKeyStorage(),
 * });
 * const partner = createLeakReportFetchHandler(
 *   createSecretScanningPartnerHandler({ service, publicKeys: githubSecretScanningKeyResolver() }),
 * );
 * const report = createLeakReportFetchHandler(createPublicRevocationHandler({ service }));
 *
 * Deno.serve((request) => {
 *   const { pathname } = new URL(request.url);
 *   if (request.method === "POST" && pathname === "/github/secret-scanning") return partner(request);
 *   if (request.method === "POST" && pathname === "/leaked-keys") return report(request);
 *   return new Response(null, { status: 404 });
 * });
 * ```
 */
export function createLeakReportFetchHandler(
  handler: LeakReportHandler,
): (request: Request) => Promise<Response> {
  if (typeof handler !== "function" || !Number.isSafeInteger(handler.maxBodyBytes)) {
    throw new TypeError("createLeakReportFetchHandler needs a leaked-key handler");
  }
  const limit = handler.maxBodyBytes + 1;
  return async (request) => {
    let body: Uint8Array;
    try {
      body = await readBounded(request.body, limit);
    } catch {
      body = new Uint8Array(0);
    }
    const report: LeakReportRequest = { body, headers: (name) => request.headers.get(name) };
    const { status, headers, body: text } = await handler(report);
    return new Response(text, { status, headers });
  };
}
