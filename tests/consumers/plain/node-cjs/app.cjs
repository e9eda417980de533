// A plain Node app: node:http and the framework-free cores, loaded with require().
const { createServer } = require("node:http");
const { ApiKeysService, InMemoryApiKeyStorage } = require("@saferoute/api-kit/api-keys");
const { buildSuccessBody } = require("@saferoute/api-kit/safe-response");

const service = new ApiKeysService({
  peppers: { 1: "a-pepper-of-at-least-thirty-two-bytes" },
  storage: new InMemoryApiKeyStorage(),
});

const server = createServer(async (request, response) => {
  const key = (request.headers.authorization ?? "").replace(/^Bearer /, "");
  const context = await service.verify(key).catch(() => null);
  const statusCode = context === null ? 401 : 200;
  response.writeHead(statusCode, { "content-type": "application/json" });
  response.end(JSON.stringify(buildSuccessBody({ statusCode, data: context?.tenantId ?? null })));
});

module.exports = { server, service };
