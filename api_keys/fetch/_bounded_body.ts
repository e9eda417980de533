/**
 * Bounded reading of a Web request body, shared by the Fetch bindings (the
 * leaked-key handlers and `readJsonBody` of `./safe-response/fetch`).
 *
 * @module
 */

/**
 * The first `limit` bytes of a body stream at most (the stream is cancelled
 * past them), so an oversized body is never buffered whole.
 */
export async function readBounded(
  body: ReadableStream<Uint8Array> | null,
  limit: number,
): Promise<Uint8Array> {
  if (body === null) return new Uint8Array(0);
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  try {
    while (length < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      length += value.length;
    }
  } finally {
    if (length >= limit) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
  const bytes = new Uint8Array(Math.min(length, limit));
  let offset = 0;
  for (const chunk of chunks) {
    const part = chunk.subarray(0, bytes.length - offset);
    bytes.set(part, offset);
    offset += part.length;
    if (offset === bytes.length) break;
  }
  return bytes;
}
