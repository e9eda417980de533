import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { PrismaLike } from "../../api_keys/deprecated_names.ts";
import { type PrismaApiKeyClient, PrismaApiKeyStorage } from "../../api_keys/storage/prisma.ts";
import { fakePrismaClient } from "./storage/fake_prisma.ts";

describe("deprecated names of @nestarc/api-keys (core)", () => {
  it("PrismaLike is the client PrismaApiKeyStorage takes", () => {
    const client: PrismaLike = fakePrismaClient();
    const same: PrismaApiKeyClient = client;
    assert.ok(new PrismaApiKeyStorage(same) instanceof PrismaApiKeyStorage);
  });
});
