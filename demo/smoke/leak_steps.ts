/**
 * Tour steps of the leaked-key routes: a key reported on the public route and
 * one reported by a signed partner request stop working; a bad signature is
 * 401 and revokes nothing.
 *
 * @module
 */
import { LEAK_ROUTES } from "../leaks/handlers.ts";
import type { DemoSigner } from "../leaks/test_signer.ts";
import type { DemoKeys } from "../seed.ts";
import { bag, expect, type StepAnswer, type StepSpec } from "./http_step.ts";

type Step = (spec: StepSpec) => Promise<StepAnswer | undefined>;

const ACCEPTED = { success: true, statusCode: 202, data: { status: "received" } };

/** Runs the leaked-key steps against the server `url` (`step` runs and records one step). */
export async function runLeakSteps(
  step: Step,
  url: string,
  keys: DemoKeys,
  signer: DemoSigner,
): Promise<void> {
  const mint = async (name: string) => {
    const answer = await step({
      title: `create a key to leak (${name})`,
      method: "POST",
      path: "/admin/keys",
      key: keys.admin.key,
      body: { name, scopes: ["projects:read"] },
      status: 201,
    });
    return String(answer ? bag(answer.body).key : "missing");
  };

  const reported = await mint("reported publicly");
  for (const [title, key] of [["a genuine key", reported], ["not a key", "hello"]]) {
    await step({
      title: `public report of ${title}: the same fixed 202`,
      method: "POST",
      path: LEAK_ROUTES.report,
      body: { key },
      status: 202,
      check: ({ body }) =>
        expect(JSON.stringify(body) === JSON.stringify(ACCEPTED), "answer differs"),
    });
  }
  // the public route revokes after answering: wait for it (bounded)
  for (let tries = 0; tries < 50; tries++) {
    const response = await fetch(`${url}/api/projects?limit=1`, {
      headers: { "x-api-key": reported },
    });
    await response.body?.cancel();
    if (response.status === 401) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await step({
    title: "the publicly reported key is revoked",
    path: "/api/projects?limit=1",
    key: reported,
    status: 401,
    code: "api_key_revoked",
  });

  const leaked = await mint("found by secret scanning");
  const matches = [{
    token: leaked,
    type: "saferoute_api_key",
    url: "https://github.com/example/repo/blob/main/.env",
    source: "content",
  }];
  const partner = (title: string, signature: string, status: number, code?: string) =>
    step({
      title,
      method: "POST",
      path: LEAK_ROUTES.partner,
      headers: {
        "Github-Public-Key-Identifier": signer.keyIdentifier,
        "Github-Public-Key-Signature": signature,
      },
      body: matches,
      status,
      code,
    });
  await partner(
    "partner report with a bad signature",
    await signer.sign(JSON.stringify(matches).replace("content", "commit")),
    401,
    "secret_scanning_signature_invalid",
  );
  await step({
    title: "the key still works after the forged report",
    path: "/api/projects?limit=1",
    key: leaked,
    status: 200,
  });
  await partner("signed partner report", await signer.sign(JSON.stringify(matches)), 200);
  await step({
    title: "the key reported by secret scanning is revoked",
    path: "/api/projects?limit=1",
    key: leaked,
    status: 401,
    code: "api_key_revoked",
  });
}
