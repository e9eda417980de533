import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { ApiKeysServiceDeps, PrismaLike } from "../../api_keys/deprecated_names.ts";
import { ApiKeysService } from "../../api_keys/service.ts";
import type { ApiKeysServiceOptions } from "../../api_keys/service_options.ts";
import { Sha256Hasher } from "../../api_keys/sha256_hasher.ts";
import { InMemoryApiKeyStorage } from "../../api_keys/storage/in_memory.ts";
import type * as core from "../../api_keys/mod.ts";
import { type PrismaApiKeyClient, PrismaApiKeyStorage } from "../../api_keys/storage/prisma.ts";
import { fakePrismaClient } from "./storage/fake_prisma.ts";

describe("deprecated names of @nestarc/api-keys (core)", () => {
  it("PrismaLike is the client PrismaApiKeyStorage takes", () => {
    const client: PrismaLike = fakePrismaClient();
    const same: PrismaApiKeyClient = client;
    assert.ok(new PrismaApiKeyStorage(same) instanceof PrismaApiKeyStorage);
  });

  it("ApiKeysServiceDeps is the options of ApiKeysService (0.1's { storage, hasher, namespace })", () => {
    const deps: ApiKeysServiceDeps = {
      storage: new InMemoryApiKeyStorage(),
      hasher: new Sha256Hasher({ peppers: { 1: "p".repeat(32) }, currentVersion: 1 }),
      namespace: "nk",
    };
    const same: ApiKeysServiceOptions = deps;
    const back: core.ApiKeysServiceDeps = same;
    assert.ok(new ApiKeysService(back) instanceof ApiKeysService);
  });
});
