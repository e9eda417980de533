// Load generator of the HTTP benchmarks, always run on Node (the same client
// for Deno and Node servers): `node loadgen.mjs <json options>`; prints one
// JSON line. Options: url, connections, duration (s) or amount, header
// (one fixed header) or keysFile (one X-API-Key per request, cycling).
import autocannon from "autocannon";
import { readFileSync } from "node:fs";
import process from "node:process";

const options = JSON.parse(process.argv[2]);
const keys = options.keysFile === undefined
  ? undefined
  : readFileSync(options.keysFile, "utf8").split("\n");
let next = 0;
const result = await autocannon({
  url: options.url,
  connections: options.connections ?? 16,
  ...(options.amount === undefined ? { duration: options.duration } : { amount: options.amount }),
  headers: options.headers ?? {},
  requests: keys === undefined ? undefined : [{
    setupRequest(request) {
      request.headers = { ...request.headers, "x-api-key": keys[next++ % keys.length] };
      return request;
    },
  }],
});
console.log(JSON.stringify({
  ok: result["2xx"],
  bad: result.non2xx + result.errors + result.timeouts,
  rps: result.requests.average,
  mean: result.latency.average,
  p50: result.latency.p50,
  p99: result.latency.p99,
  seconds: result.duration,
}));
