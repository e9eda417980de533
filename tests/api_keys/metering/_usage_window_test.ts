import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { checkUsageWindow } from "../../../api_keys/metering/_usage_window.ts";
import { ApiKeyValidationError } from "../../../api_keys/errors.ts";

const T0 = Date.UTC(2030, 0, 1);
const DAY = 86_400_000;

/** Asserts `window` is refused with an `ApiKeyValidationError` naming `field`. */
function refuses(window: Record<string, unknown>, field: string, problem: RegExp) {
  assert.throws(
    () => checkUsageWindow(window as Parameters<typeof checkUsageWindow>[0]),
    (error) =>
      error instanceof ApiKeyValidationError && error.field === field &&
      problem.test(error.message),
  );
}

const HOUR = 3_600_000;

describe("checkUsageWindow", () => {
  it("returns from and to in epoch ms, widened to whole buckets; the longest windows are 31 days and 1 hour by hour (a local month giving back its summer hour) and 366 days by day", () => {
    const from = new Date(T0);
    assert.deepEqual(
      checkUsageWindow({ granularity: "hour", from, to: new Date(T0 + 31 * DAY + HOUR) }),
      { fromMs: T0, toMs: T0 + 31 * DAY + HOUR },
    );
    // October 2030 in Europe/Berlin, local midnight to local midnight: 745 hours.
    const october = {
      granularity: "hour" as const,
      from: new Date("2030-09-30T22:00:00Z"),
      to: new Date("2030-10-31T23:00:00Z"),
    };
    assert.equal(checkUsageWindow(october).toMs - checkUsageWindow(october).fromMs, 745 * HOUR);
    assert.deepEqual(
      checkUsageWindow({ granularity: "day", from, to: new Date(T0 + 366 * DAY) }),
      { fromMs: T0, toMs: T0 + 366 * DAY },
    );
    assert.deepEqual(checkUsageWindow({ granularity: "day", from: new Date(0), to: new Date(1) }), {
      fromMs: 0,
      toMs: DAY,
    });
  });

  it("widens the window to whole UTC buckets: from floored, to rounded up (the bounds of the buckets read)", () => {
    const at = (iso: string) => new Date(iso);
    assert.deepEqual(
      checkUsageWindow({
        granularity: "day",
        from: at("2030-01-01T12:00:00Z"),
        to: at("2030-01-02T12:00:00Z"),
      }),
      { fromMs: T0, toMs: T0 + 2 * DAY },
    );
    assert.deepEqual(
      checkUsageWindow({
        granularity: "hour",
        from: at("2030-01-01T12:30:00Z"),
        to: at("2030-01-01T13:00:00Z"),
      }),
      { fromMs: T0 + 12 * HOUR, toMs: T0 + 13 * HOUR },
    );
  });

  it("refuses a bad granularity, a bad or pre-1970 instant, an empty or too long window, naming the field", () => {
    const from = new Date(T0);
    refuses(
      { granularity: "week", from, to: new Date(T0 + DAY) },
      "granularity",
      /"hour" or "day"/,
    );
    refuses({ granularity: "hour", from: new Date(NaN), to: from }, "from", /valid Date/);
    refuses({ granularity: "hour", from, to: "tomorrow" }, "to", /valid Date/);
    refuses({ granularity: "day", from: new Date(-1), to: from }, "from", /1970/);
    refuses({ granularity: "day", from, to: new Date(8.64e15) }, "to", /9999/);
    refuses({ granularity: "hour", from, to: from }, "to", /after from/);
    refuses({ granularity: "hour", from, to: new Date(T0 - 1) }, "to", /after from/);
    refuses(
      { granularity: "hour", from, to: new Date(T0 + 31 * DAY + HOUR + 1) },
      "to",
      /at most 31 days and 1 hour after from/,
    );
    refuses({ granularity: "day", from, to: new Date(T0 + 366 * DAY + 1) }, "to", /366 days/);
  });

  it("refuses a to whose bucket ends past the latest instant (9999-12-31T23:59:59.999Z), naming to and the latest to it takes; the last whole bucket is a window's end", () => {
    const at = (iso: string) => new Date(iso);
    const lastDay = at("9999-12-31T00:00:00Z");
    const from = at("9999-12-30T00:00:00Z");
    // The last hour (day) of 9999 ends at 10000-01-01T00:00:00Z: a window can end where it starts.
    const byDay = /must be at most 9999-12-31T00:00:00\.000Z by day \(/;
    const byHour = /must be at most 9999-12-31T23:00:00\.000Z by hour \(/;
    refuses({ granularity: "day", from, to: at("9999-12-31T23:59:59.999Z") }, "to", byDay);
    refuses({ granularity: "day", from, to: at("9999-12-31T00:00:00.001Z") }, "to", byDay);
    refuses({ granularity: "hour", from: lastDay, to: at("9999-12-31T23:30:00Z") }, "to", byHour);
    refuses(
      { granularity: "hour", from: lastDay, to: at("9999-12-31T23:00:00.001Z") },
      "to",
      byHour,
    );
    refuses(
      { granularity: "hour", from: lastDay, to: at("9999-12-31T23:59:59.999Z") },
      "to",
      byHour,
    );
    assert.deepEqual(checkUsageWindow({ granularity: "day", from, to: lastDay }), {
      fromMs: from.getTime(),
      toMs: lastDay.getTime(),
    });
    const lastHour = at("9999-12-31T23:00:00Z");
    assert.deepEqual(checkUsageWindow({ granularity: "hour", from: lastDay, to: lastHour }), {
      fromMs: lastDay.getTime(),
      toMs: lastHour.getTime(),
    });
  });
});
