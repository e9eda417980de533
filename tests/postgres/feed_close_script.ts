/**
 * Run by tests/postgres/change_feed_test.ts as a child process: starts a
 * change feed, waits for its sync and one notice, closes it, prints a JSON
 * report and returns from the module. If `close()` left a timer or a socket
 * behind, the process would not exit and the test would time out.
 *
 * @module
 */
import pg from "pg";
import { createPostgresFeed } from "../../api_keys/postgres/mod.ts";

const url = Deno.env.get("DATABASE_URL")!;
const feed = createPostgresFeed({ connectionString: url, pollMs: 20 });
let sawNotice = false;
feed.subscribe((notice) => {
  if (notice.kind === "updated") sawNotice = true;
});
const deadline = performance.now() + 5_000;
while (!feed.status().healthy && performance.now() < deadline) {
  await new Promise((resolve) => setTimeout(resolve, 10));
}
const healthyBeforeClose = feed.status().healthy;
const writer = new pg.Client({ connectionString: url });
await writer.connect();
await writer.query(
  "INSERT INTO api_keys (id, tenant_id, name, environment, prefix, hash, pepper_version, scopes)" +
    " VALUES ('close-script', 't', 'n', 'live', 'CloseScript1', 'h', 1, '{}')",
);
await writer.query("UPDATE api_keys SET name = 'renamed' WHERE id = 'close-script'");
await writer.query("DELETE FROM api_keys WHERE id = 'close-script'");
await writer.end();
while (!sawNotice && performance.now() < deadline) {
  await new Promise((resolve) => setTimeout(resolve, 10));
}
await feed.close();
console.log(JSON.stringify({ healthyBeforeClose, sawNotice, closedAt: Date.now() }));
