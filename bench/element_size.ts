/**
 * Benchmark 11: the size of `<api-keys-manager>` as browsers get it:
 * `client/elements/mod.ts` bundled and minified by esbuild (as the demo page
 * does), then gzipped. Target: at most 15 KB gzipped, `MISSED` otherwise
 * (printed, never thrown; tests/browser/api_keys_manager_test.ts fails above
 * 30 KB).
 *
 * Run: `deno run -A bench/element_size.ts` (or through `deno task bench`).
 *
 * @module
 */
import { gzipSync } from "node:zlib";
import { bundleElements } from "../demo/page_assets.ts";
import { fmt, printTable, runtimeName, verdict } from "./lib/harness.ts";

const TARGET_BYTES = 15 * 1024;

const code = new TextEncoder().encode(await bundleElements());
const gzipped = gzipSync(code, { level: 9 }).length;
printTable(
  `<api-keys-manager> size (${runtimeName()}): esbuild-minified + gzipped, target 15 KB`,
  ["entry", "minified KB", "gzipped KB", "target KB", "target"],
  [[
    "client/elements/mod.ts",
    fmt(code.length / 1024, 1),
    fmt(gzipped / 1024, 1),
    "15.0",
    verdict(gzipped <= TARGET_BYTES),
  ]],
);
