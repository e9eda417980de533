/**
 * Preloaded by every `deno test` task (`--preload tests/load_guard.ts`): a test
 * file that throws while it loads fails its run. Deno's `node:test`, once a
 * file has registered a test, swallows any uncaught error or rejection that
 * no running test owns, so a file throwing after its first `describe`/`it`
 * reported the tests registered so far and passed. Until the first test starts,
 * this listener, added before `node:test`'s, keeps such an error from it, and
 * Deno fails the file as on an uncaught error. Node's `--test` fails the file
 * on its own.
 *
 * @module
 */

let loading = true;
Deno.test.beforeAll(() => {
  loading = false;
});

/** Hides an error raised while the file loads from the listeners after this one. */
function keepFromNodeTest(event: Event): void {
  if (loading) event.stopImmediatePropagation();
}

addEventListener("error", keepFromNodeTest);
addEventListener("unhandledrejection", keepFromNodeTest);
