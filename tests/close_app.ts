/**
 * Closes a Nest app under test and drops its open connections, so a
 * keep-alive connection left in `fetch`'s pool never holds `close()` up (seen
 * under Deno's `node:http`, where such a connection may not count as idle).
 * Every request of a test has completed by the time it closes its app.
 *
 * @module
 */
import type { INestApplication } from "@nestjs/common";

/** Closes `app`, ending every connection its HTTP server still holds. */
export async function closeApp(app: INestApplication): Promise<void> {
  const server = app.getHttpServer() as { closeAllConnections?: () => void };
  const closing = app.close();
  server.closeAllConnections?.();
  await closing;
}
