/**
 * The scheduled job behind `ApiKeysService.notifyExpiring`: one pass over the
 * keys whose expiry is near, emitting `api_key.expiring` at most once per key
 * and threshold and `api_key.rotation_completed` at most once per rotation
 * whose old key stopped being accepted. This holds across every instance
 * running the job at the same moment: each event is emitted only by the
 * instance whose compare-and-set claim (`claimExpiryNotice`) won, after it is
 * stored. A claim that outlives the storage deadline (stored all the same) or
 * a crash between claim and emit loses that event: no later run sends it.
 *
 * @module
 */
import { acceptedUntilMs } from "./_accepted_until.ts";
import {
  fail,
  instantProblem,
  MAX_API_KEY_INSTANT_MS,
  MIN_API_KEY_INSTANT_MS,
  thresholdsProblem,
} from "./_input.ts";
import type { Settings } from "./_settings.ts";
import type { ListExpiringApiKeysOptions } from "./storage/types.ts";
import type { ApiKeyRecord, NotifyExpiringOptions, NotifyExpiringResult } from "./types.ts";

/** Records read per `listExpiring` call. */
const PAGE_SIZE = 500;

/**
 * Claims one run has in flight at most: a run never takes more than this
 * share of a connection pool, and each claim meets the storage deadline.
 */
const CLAIMS_IN_FLIGHT = 8;

/**
 * The claim of a completed rotation: below every threshold, so no notice
 * follows it (see `ApiKeyStorage.claimExpiryNotice`).
 */
const ROTATION_COMPLETED = 0;

/** The smallest of ascending `thresholds` that `remainingMs` is within, if any. */
function thresholdOf(thresholds: readonly number[], remainingMs: number): number | undefined {
  return thresholds.find((threshold) => remainingMs <= threshold);
}

/** Runs `notifyExpiring` with the compiled settings. */
export class ExpiryJob {
  readonly #s: Settings;

  /** A job over `settings`. */
  constructor(settings: Settings) {
    this.#s = settings;
  }

  /** See `ApiKeysService.notifyExpiring`. */
  async run(options: NotifyExpiringOptions): Promise<NotifyExpiringResult> {
    const s = this.#s;
    if (typeof options !== "object" || options === null) fail("options", "must be an object");
    const problem = thresholdsProblem(options.thresholdsMs);
    if (problem !== undefined) fail("thresholdsMs", problem);
    const now = options.now ?? s.clock();
    if (!(now instanceof Date) || Number.isNaN(now.getTime())) fail("now", "must be a valid Date");
    const nowProblem = instantProblem(now.getTime());
    if (nowProblem !== undefined) fail("now", nowProblem);
    const notices = s.storage.expiryNotices;
    if (notices === undefined) {
      throw new TypeError(
        "api-keys: notifyExpiring needs the storage capabilities listExpiring and " +
          "claimExpiryNotice (InMemoryApiKeyStorage has them; PrismaApiKeyStorage with its " +
          "expiryNotices option); see ApiKeyStorage",
      );
    }
    const thresholds = [...new Set(options.thresholdsMs)].sort((a, b) => a - b);
    const nowMs = now.getTime();
    const largest = thresholds[thresholds.length - 1];
    const result: NotifyExpiringResult = { expiring: 0, rotationsCompleted: 0 };
    // Expired keys within the largest threshold too: the rotations that ended since. Within the
    // instants a record holds: a database refuses a date before year 1 (`from` is exclusive, so
    // an expiry at the very first instant, of a key ended 2,000 years ago, is not listed).
    const page: ListExpiringApiKeysOptions = {
      from: new Date(Math.max(nowMs - largest, MIN_API_KEY_INSTANT_MS)),
      until: new Date(Math.min(nowMs + largest, MAX_API_KEY_INSTANT_MS)),
      after: null,
      limit: PAGE_SIZE,
    };
    for (;;) {
      const records = await notices.list(page);
      let next = 0;
      const worker = async () => {
        while (next < records.length) {
          const record = records[next++];
          // A rotation without grace ended at once, whatever this instance's clock says.
          const expiresAtMs = acceptedUntilMs(record);
          if (expiresAtMs > nowMs) {
            const threshold = thresholdOf(thresholds, expiresAtMs - nowMs)!;
            if (await notices.claim(record.id, threshold, now)) {
              result.expiring++;
              this.#expiring(record, threshold, now);
            }
          } else if (record.replacedByKeyId !== null && record.rotatedAt !== null) {
            if (await notices.claim(record.id, ROTATION_COMPLETED, now)) {
              result.rotationsCompleted++;
              this.#completed(record, now);
            }
          }
        }
      };
      await Promise.all(Array.from({ length: CLAIMS_IN_FLIGHT }, worker));
      const last = records.at(-1);
      if (records.length < PAGE_SIZE || last === undefined) return result;
      page.after = { expiresAt: last.expiresAt!, id: last.id };
    }
  }

  #expiring(record: ApiKeyRecord, thresholdMs: number, at: Date): void {
    this.#s.emitEvent?.({
      type: "api_key.expiring",
      at: new Date(at.getTime()),
      keyId: record.id,
      tenantId: record.tenantId,
      prefix: record.prefix,
      environment: record.environment,
      expiresAt: record.expiresAt!,
      thresholdMs,
    });
  }

  #completed(record: ApiKeyRecord, at: Date): void {
    this.#s.emitEvent?.({
      type: "api_key.rotation_completed",
      at: new Date(at.getTime()),
      tenantId: record.tenantId,
      oldKeyId: record.id,
      oldPrefix: record.prefix,
      newKeyId: record.replacedByKeyId!,
      environment: record.environment,
      rotatedAt: record.rotatedAt!,
      endedAt: record.expiresAt!,
    });
  }
}
