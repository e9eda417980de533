/**
 * Builds the npm package into `npm/` (ESM + CJS + .d.ts). Not built yet: the
 * npm issue fills this script.
 *
 * @module
 */
console.error("build_npm: not implemented yet");
Deno.exit(1);
