import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  InMemoryApiKeyStorage,
  PrismaApiKeyStorage,
  runApiKeyStorageContract,
} from "../../api_keys/mod.ts";
import { fakePrismaClient } from "./fake_prisma.ts";

describe("storage contract: InMemoryApiKeyStorage", () => {
  runApiKeyStorageContract(() => new InMemoryApiKeyStorage(), it);
});

describe("storage contract: PrismaApiKeyStorage over a fake delegate with $transaction", () => {
  runApiKeyStorageContract(() => new PrismaApiKeyStorage(fakePrismaClient()), it);
});

describe("storage contract: PrismaApiKeyStorage over a fake delegate without $transaction", () => {
  runApiKeyStorageContract(
    () => new PrismaApiKeyStorage(fakePrismaClient({ transactions: false })),
    it,
  );
});

describe("optional storage capabilities of the bundled adapters", () => {
  it("both offer markRevokedIfActive, so the contract's cases for it run on them", () => {
    for (
      const storage of [
        new InMemoryApiKeyStorage(),
        new PrismaApiKeyStorage(fakePrismaClient()),
        new PrismaApiKeyStorage(fakePrismaClient({ transactions: false })),
      ]
    ) {
      assert.equal(
        typeof (storage as { markRevokedIfActive?: unknown }).markRevokedIfActive,
        "function",
      );
    }
  });
});
