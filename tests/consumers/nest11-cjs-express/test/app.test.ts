// Real HTTP requests against the consumer app (Nest 11, CommonJS, Express): the checks are
// ../shared/suite.ts (copied in from tests/consumers/shared/ by run.ts).
import { consumerSuite } from "../shared/suite.ts";
import { bootstrap } from "../src/app.ts";

consumerSuite("nest11-cjs-express consumer", bootstrap);
