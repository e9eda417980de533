/**
 * Registers the scenarios (`scenarios.ts`) as one `describe` block per
 * binding: `start(mode)` boots the binding's scenario app in the error
 * envelope or problem-details mode and returns it; each scenario is one `it`.
 * A scenario that needs a capability the binding lacks (a Nest-only feature)
 * is not registered for it at all: nothing is skipped. Only `node:test`,
 * `node:assert` and `fetch`: a consumer app can call it with its own
 * bootstrap.
 *
 * @module
 */
import { after, before, describe, it } from "node:test";
import { SCENARIOS, type ScenarioTarget, send } from "./scenarios.ts";
import type { Capabilities, ScenarioMode } from "./spec.ts";

/** A running scenario app. */
export interface RunningScenarioApp extends ScenarioTarget {
  /** Stops it. */
  close(): Promise<void>;
}

/** Registers every scenario against the apps `start` boots (one per mode, booted once). */
export function scenarioSuite(
  name: string,
  capabilities: Capabilities,
  start: (mode: ScenarioMode) => Promise<RunningScenarioApp>,
): void {
  describe(name, () => {
    const apps = new Map<ScenarioMode, RunningScenarioApp>();
    before(async () => {
      apps.set("envelope", await start("envelope"));
      apps.set("problem", await start("problem"));
    });
    after(async () => {
      for (const app of apps.values()) await app.close();
    });
    const applicable = SCENARIOS.filter((scenario) =>
      scenario.needs === undefined || capabilities[scenario.needs]
    );
    for (const scenario of applicable) {
      it(scenario.name, async () => {
        const target = apps.get(scenario.mode ?? "envelope")!;
        await scenario.run((path, init) => send(target, path, init), target.keys);
      });
    }
  });
}
