/**
 * Tour steps of the `trial` key's credits: the admin list shows its balance,
 * each call spends one, the call past the last is a 429
 * `api_key_usage_exceeded` without `Retry-After` (no refill) that counts
 * nothing against the key's rate-limit policy, and the list then shows 0.
 *
 * @module
 */
import { isError } from "../../client/mod.ts";
import { DEMO_ADMIN_PREFIX } from "../admin/admin_routes.ts";
import { DEMO_KEY_POLICY, TRIAL_KEY_CREDITS } from "../limits.ts";
import type { DemoKeys } from "../seed.ts";
import {
  bag,
  expect,
  runStep,
  type StepAnswer,
  type StepResult,
  type StepSpec,
} from "./http_step.ts";

type Step = (spec: StepSpec) => Promise<StepAnswer | undefined>;

/** The route the trial key spends on. */
const SPEND_PATH = "/api/projects?limit=1";

/** The `RateLimit` field the key's policy must show with `remaining` left. */
const rateLimitSays = (answer: StepAnswer, remaining: number) =>
  expect(
    new RegExp(`^"${DEMO_KEY_POLICY.name}";r=${remaining};t=\\d+$`).test(
      answer.headers.get("ratelimit") ?? "",
    ),
    `RateLimit does not say r=${remaining}`,
  );

/**
 * Runs the credit steps against the server `url`: `step` runs and records one
 * step; the spending calls are one line for `record` (the first that failed, if any).
 */
export async function runCreditSteps(
  step: Step,
  url: string,
  keys: DemoKeys,
  record: (result: StepResult) => void,
): Promise<void> {
  const listed = (credits: number) =>
    step({
      title: `the admin list shows the trial key's credits: ${credits}`,
      path: `${DEMO_ADMIN_PREFIX}/keys`,
      key: keys.admin.key,
      headers: { "X-Requested-With": "api-keys-manager" },
      status: 200,
      check: ({ body }) => {
        const list = bag(body).keys;
        const trial = bag(
          Array.isArray(list) ? list.find((key) => bag(key).id === keys.trial.id) : 0,
        );
        return expect(trial.credits === credits, `credits is ${trial.credits}`) ??
          expect(trial.creditsNextRefillAt === null, "a next refill is listed");
      },
    });

  await listed(TRIAL_KEY_CREDITS);
  const spend = (call: number) =>
    runStep(url, {
      title: `the trial key: ${TRIAL_KEY_CREDITS} calls accepted, one credit each`,
      path: SPEND_PATH,
      key: keys.trial.key,
      status: 200,
      check: (answer) => rateLimitSays(answer, DEMO_KEY_POLICY.limit - call),
    });
  let spent = await spend(1);
  for (let call = 2; call <= TRIAL_KEY_CREDITS && spent.failure === undefined; call++) {
    spent = await spend(call);
  }
  record(spent);
  await step({
    title: "credits spent: 429 without Retry-After (no refill), the policy's count unchanged",
    path: SPEND_PATH,
    key: keys.trial.key,
    status: 429,
    code: "api_key_usage_exceeded",
    check: (answer) =>
      expect(isError(answer.body), "not an error envelope") ??
        expect(!answer.headers.has("retry-after"), "a Retry-After without a refill") ??
        rateLimitSays(answer, DEMO_KEY_POLICY.limit - TRIAL_KEY_CREDITS),
  });
  await listed(0);
}
