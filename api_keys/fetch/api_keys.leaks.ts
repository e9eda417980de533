/**
 * The leaked-key handlers over a Web `Request`.
 *
 * @module
 */
import type { LeakReportHandler, LeakReportResponse } from "../leaks/types.ts";
import { readBounded } from "./_bounded_body.ts";

/**
 * Turns a leaked-key handler of `./api-keys` into a Fetch handler. A request
 * its headers refuse (the partner handler's, unsigned) is answered unread;
 * otherwise the raw body is read up to `maxBodyBytes + 1` bytes, so a larger one gets the
 * handler's own answer; a body failing mid-way is handled as empty, and one
 * already read by other code (`bodyUsed`) rejects with a `TypeError` (a 500),
 * as on Nest: an empty report would be answered and revoke nothing.
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
  const respond = ({ status, headers, body }: LeakReportResponse) =>
    new Response(body, { status, headers });
  return async (request) => {
    const headers = (name: string) => request.headers.get(name);
    const refused = handler.refuse?.(headers);
    if (refused !== undefined) return respond(refused);
    // Read first by other code (a middleware): an empty report would be answered and revoke nothing.
    if (request.bodyUsed || request.body?.locked === true) {
      throw new TypeError(
        "createLeakReportFetchHandler: the request's body was already read; hand the handler " +
          "the request unread",
      );
    }
    let body: Uint8Array;
    try {
      body = await readBounded(request.body, limit);
    } catch {
      body = new Uint8Array(0);
    }
    return respond(await handler({ body, headers }));
  };
}
