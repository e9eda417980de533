import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { contained } from "../../rate_limits/_contained.ts";
import { collectUnhandledRejections } from "../reliability/harness.ts";

describe("rate_limits/_contained.ts", () => {
  it("calls the function with its arguments; a throw or a rejection goes to onFailure, never to the caller nor unhandled", async () => {
    const rejections = collectUnhandledRejections();
    const seen: unknown[] = [];
    const failures: string[] = [];
    const onFailure = (error: unknown) => failures.push((error as Error).message);
    contained((a: number, b: string) => seen.push([a, b]), [1, "x"], onFailure);
    contained(
      () => {
        throw new Error("threw");
      },
      [],
      onFailure,
    );
    contained(() => Promise.reject(new Error("rejected")), [], onFailure);
    await new Promise((resolve) => setTimeout(resolve, 0));
    await rejections.stop();
    assert.deepEqual(seen, [[1, "x"]]);
    assert.deepEqual(failures, ["threw", "rejected"]);
    assert.deepEqual(rejections.reasons, []);
  });
});
