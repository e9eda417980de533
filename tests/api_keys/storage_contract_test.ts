import { describe, it } from "node:test";
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
