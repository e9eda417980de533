/** The scenario suite on the Nest bindings, on Express and on Fastify. */
import { ApiKeysService } from "../../api_keys/mod.ts";
import { boot, PLATFORMS } from "../api_keys/nest/test_app.ts";
import { NEST_CAPABILITIES, nestScenarioModule, unknownKey } from "./nest_app.ts";
import { seedScenarioKeys } from "./spec.ts";
import { scenarioSuite } from "./suite.ts";

for (const platform of PLATFORMS) {
  scenarioSuite(`scenarios: Nest on ${platform}`, NEST_CAPABILITIES, async (mode) => {
    const running = await boot(nestScenarioModule(mode) as never, platform);
    const keys = await seedScenarioKeys(running.app.get(ApiKeysService), unknownKey());
    const url = await running.app.getUrl();
    return { url: url.replace("[::1]", "127.0.0.1"), keys, close: running.close };
  });
}
