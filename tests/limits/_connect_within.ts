/**
 * A node-redis client's or cluster's `connect()` with a bound: one whose node
 * is down retries forever (its reconnect strategy), so a suite run against a
 * dead node would wait at connect without a word.
 */

/**
 * `client.connect()`, or past `ms` the client destroyed and an `Error` naming
 * `what` and `hint` (what to do about it).
 */
export async function connectWithin<
  C extends { connect(): Promise<unknown>; destroy(): unknown },
>(client: C, ms: number, what: string, hint: string): Promise<Awaited<ReturnType<C["connect"]>>> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      client.destroy();
      reject(new Error(`${what} did not connect within ${ms} ms: ${hint}`));
    }, ms);
  });
  try {
    return await Promise.race([client.connect(), late]) as Awaited<ReturnType<C["connect"]>>;
  } finally {
    clearTimeout(timer);
  }
}
