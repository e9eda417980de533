/**
 * A request body stream for tests of bounded readers: `total` bytes of spaces
 * in chunks of `chunkSize`, pulled only on demand, counting what was pulled
 * and whether it was cancelled.
 *
 * @module
 */

/** The stream and what was done to it. */
export interface CountingBody {
  /** The body. */
  stream: ReadableStream<Uint8Array>;
  /** Bytes pulled so far. */
  pulled(): number;
  /** Whether the reader cancelled the stream. */
  cancelled(): boolean;
}

/** A body of `total` bytes in `chunkSize` chunks. */
export function countingBody(total: number, chunkSize: number): CountingBody {
  let pulled = 0;
  let cancelled = false;
  const chunk = new TextEncoder().encode(" ".repeat(chunkSize));
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled >= total) return controller.close();
      pulled += chunk.length;
      controller.enqueue(chunk);
    },
    cancel() {
      cancelled = true;
    },
  }, { highWaterMark: 0 });
  return { stream, pulled: () => pulled, cancelled: () => cancelled };
}
