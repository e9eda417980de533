/**
 * Upgrade responses (a WebSocket handshake's 101), which the Fetch wrappers send as they are.
 * @module
 */

/**
 * Whether `response` switches protocols (`Deno.upgradeWebSocket`'s, a Worker's WebSocket pair):
 * the server sends it as it is and the request is closed, so nothing is read or added after it.
 */
export function isUpgradeResponse(response: Response): boolean {
  return response.status === 101;
}
