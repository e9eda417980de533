import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { callDetached } from "../../telemetry/_detached.ts";
import { collectUnhandledRejections } from "../reliability/harness.ts";

describe("telemetry/_detached.ts", () => {
  it("calls the function with its arguments, never awaiting; a throw or a rejection goes to onFailure, never to the caller nor unhandled", async () => {
    const rejections = collectUnhandledRejections();
    const seen: unknown[] = [];
    const failures: string[] = [];
    const onFailure = (error: unknown) => failures.push((error as Error).message);
    callDetached((a: number, b: string) => seen.push([a, b]), [1, "x"], onFailure);
    callDetached(
      () => {
        throw new Error("threw");
      },
      [],
      onFailure,
    );
    let settled = false;
    callDetached(
      () => Promise.reject(new Error("rejected")).finally(() => settled = true),
      [],
      onFailure,
    );
    assert.equal(settled, false, "not awaited");
    await new Promise((resolve) => setTimeout(resolve, 0));
    await rejections.stop();
    assert.deepEqual(seen, [[1, "x"]]);
    assert.deepEqual(failures, ["threw", "rejected"]);
    assert.deepEqual(rejections.reasons, []);
  });
});
