/**
 * Steps of the smoke tour for a rotation that waits for the new key
 * (`graceStarts: "first-use"`): the old key keeps working while the new one
 * waits, shows its `lastUsedAt` in the key list, and stops at the new key's
 * first use plus the grace (0 here).
 *
 * @module
 */
import { isSuccess } from "../../client/mod.ts";
import type { DemoKeys } from "../seed.ts";
import { bag, expect, type StepAnswer } from "./http_step.ts";
import type { RunStep } from "./parity_steps.ts";

/** How long the tour's rotation waits for the new key's first use: one hour. */
const MAX_WAIT_MS = 3_600_000;

const dataOf = (answer: StepAnswer | undefined) => bag(bag(answer?.body).data);

/** A rotation with `graceStarts: "first-use"` through the admin routes, on the envelope server. */
export async function runWaitingRotationSteps(api: RunStep, keys: DemoKeys): Promise<void> {
  const created = await api({
    title: "create a key to rotate on its successor's first use",
    method: "POST",
    path: "/admin/keys",
    key: keys.admin.key,
    body: { name: "smoke waiting rotation", scopes: [{ resource: "projects", level: "read" }] },
    status: 201,
    code: "KEY_CREATED",
  });
  const oldId = String(dataOf(created).id ?? "missing");
  const oldKey = String(dataOf(created).key ?? "missing");
  await api({ title: "use it once", path: "/api/projects?limit=1", key: oldKey, status: 200 });
  await api({
    title: 'graceStarts "first-use" without maxWaitMs',
    method: "POST",
    path: `/admin/keys/${oldId}/rotate`,
    key: keys.admin.key,
    body: { graceStarts: "first-use" },
    status: 400,
    code: "api_key_invalid_input",
  });
  const before = Date.now();
  const rotated = await api({
    title: "rotate, the grace (0) starting at the new key's first use, waiting up to 1 h",
    method: "POST",
    path: `/admin/keys/${oldId}/rotate`,
    key: keys.admin.key,
    body: { gracePeriodMs: 0, graceStarts: "first-use", maxWaitMs: MAX_WAIT_MS },
    status: 201,
    code: "KEY_ROTATED",
    check: (answer) => {
      const graceEnd = Date.parse(String(dataOf(answer).graceExpiresAt));
      return expect(
        graceEnd >= before + MAX_WAIT_MS && graceEnd <= Date.now() + MAX_WAIT_MS,
        "graceExpiresAt is not the upper bound, rotation + maxWaitMs",
      );
    },
  });
  const newKey = String(dataOf(rotated).key ?? "missing");
  await api({
    title: "the old key while the new one waits",
    path: "/api/projects?limit=1",
    key: oldKey,
    status: 200,
  });
  await api({
    title: "the old key in the list: rotating, its last use visible",
    path: `/admin/keys/${oldId}`,
    key: keys.admin.key,
    status: 200,
    check: (answer) => {
      const view = isSuccess(answer.body) ? bag(answer.body.data) : {};
      return expect(
        view.status === "rotating" && typeof view.lastUsedAt === "string",
        "the old key is not listed as rotating with its lastUsedAt",
      );
    },
  });
  await api({
    title: "first use of the new key",
    path: "/api/projects?limit=1",
    key: newKey,
    status: 200,
  });
  await api({
    title: "the old key after the new key's first use (grace 0)",
    path: "/api/projects?limit=1",
    key: oldKey,
    status: 401,
    code: "api_key_expired",
  });
}
