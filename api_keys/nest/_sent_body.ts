/**
 * Whether a Nest HTTP request (Express or Fastify, HTTP/1.1 or HTTP/2) sent
 * a body, read from the request alone: the admin routes and the leaked-key
 * handlers refuse a body no parser read rather than take it for none.
 *
 * @module
 */

/** What `sentBody` reads: Node's header object, and Fastify's `raw` (Node's request) when set. */
export interface SentBodyRequest {
  headers: Record<string, string | string[] | undefined>;
  raw?: unknown;
}

/**
 * HTTP/2 (the request's `stream`, Node's `Http2Stream`): a body unless the
 * headers ended the stream; HTTP/1.1 (RFC 9112 6.3): a `content-length`
 * above 0, or a `transfer-encoding`.
 */
export function sentBody(request: SentBodyRequest): boolean {
  const { headers } = request;
  const node = ("raw" in request ? request.raw : request) as {
    stream?: { endAfterHeaders: boolean };
  };
  return node.stream !== undefined
    ? !node.stream.endAfterHeaders
    : headers["transfer-encoding"] !== undefined || Number(headers["content-length"]) > 0;
}
