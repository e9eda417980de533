/**
 * `PrismaApiKeyStorage.ready()` on a real PostgreSQL through a real Prisma
 * Client over `@prisma/adapter-pg`: a session whose time zone is not UTC
 * (where the adapter stores every instant it writes moved by the zone's
 * offset) is refused with a `TypeError` naming the fix, by the storage and by
 * `service.ready()`; a UTC session, or a zone always at offset 0, is not.
 * Skips without `DATABASE_URL`; fails instead under `CI=true`.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { ApiKeysService, PrismaApiKeyStorage } from "../../api_keys/mod.ts";
import {
  createPrismaClient,
  databaseReady,
  probeDatabase,
  type TestPrismaClient,
} from "./prisma_client.ts";

const url = Deno.env.get("DATABASE_URL");
const unavailable = await probeDatabase(url);
const PEPPERS = { 1: "session-zone-test-pepper-0123456789abcdef" };

if (databaseReady("PrismaApiKeyStorage: the session's time zone", unavailable)) {
  const clients: TestPrismaClient[] = [];
  /** A Prisma Client whose sessions are in `zone` (none: the server's default, UTC here). */
  const clientIn = async (
    zone?: string,
    options = zone === undefined ? "" : `-c timezone=${zone}`,
  ) => {
    const zoned = new URL(url!);
    if (options !== "") zoned.searchParams.set("options", options);
    const client = await createPrismaClient(zoned.href);
    clients.push(client);
    return client;
  };
  after(() => Promise.all(clients.map((client) => client.$disconnect())));

  describe("PrismaApiKeyStorage: the session's time zone", () => {
    it("a UTC session (UTC, GMT and their aliases): ready() resolves, and so does the service's", async () => {
      for (const zone of [undefined, "UTC", "Etc/UTC", "GMT", "Zulu", "UTC0"]) {
        const storage = new PrismaApiKeyStorage(await clientIn(zone));
        await storage.ready!();
        await new ApiKeysService({ storage, peppers: PEPPERS }).ready();
      }
    });

    it("another zone (behind, ahead, at offset 0 in winter only, or not since ever): ready() and the service's reject with a TypeError naming the zone and the fix", async () => {
      for (
        const zone of [
          "America/New_York",
          "Pacific/Chatham",
          "Europe/London",
          // At offset 0 in 2000, not since: UTC+1 but in Ramadan; UTC+2 in the austral winter.
          "Africa/Casablanca",
          "Antarctica/Troll",
          // At offset 0 since 1912 only: an imported key's older instant is moved.
          "Africa/Abidjan",
        ]
      ) {
        const storage = new PrismaApiKeyStorage(await clientIn(zone));
        const refused = {
          name: "TypeError",
          message: new RegExp(
            `time zone is ${zone.replace("/", "\\/")}, not UTC.*options=-c%20TimeZone%3DUTC`,
          ),
        };
        await assert.rejects(storage.ready!(), refused, zone);
        await assert.rejects(new ApiKeysService({ storage, peppers: PEPPERS }).ready(), refused);
      }
      // Floats printed with fewer digits: the instant probed is read exactly all the same.
      const rounding = new PrismaApiKeyStorage(
        await clientIn(undefined, "-c timezone=Europe/London -c extra_float_digits=-13"),
      );
      await assert.rejects(rounding.ready!(), { name: "TypeError", message: /Europe\/London/ });
    });

    it("a DateStyle other than ISO (the client reads instants back as Invalid Date): ready() and the service's reject with a TypeError naming it", async () => {
      for (const style of ["SQL, DMY", "German", "Postgres, MDY"]) {
        const storage = new PrismaApiKeyStorage(
          await clientIn(undefined, `-c datestyle=${style.replace(", ", ",")}`),
        );
        const refused = {
          name: "TypeError",
          message: /DateStyle is .*options=-c%20DateStyle%3DISO/,
        };
        await assert.rejects(storage.ready!(), refused, style);
        await assert.rejects(new ApiKeysService({ storage, peppers: PEPPERS }).ready(), refused);
      }
      await new PrismaApiKeyStorage(await clientIn(undefined, "-c datestyle=ISO,DMY")).ready!();
    });
  });
}
