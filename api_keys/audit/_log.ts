/**
 * The audit log of one `ApiKeysService` (option `audit`): builds each
 * record, reads pages of it, verifies and exports a tenant's chain, prunes
 * it, and signs checkpoints every `checkpointEvery` records or
 * `checkpointIntervalMs` (emitted as `api_key.audit_checkpoint`). Nothing is
 * signed before the chain verifies up to it.
 *
 * @module
 */
import type { ApiKeyEvent } from "../events.ts";
import { redactApiKeys } from "../key_format.ts";
import type { AuditAccess } from "../storage/_access.ts";
import {
  type Dispatch,
  logLine,
  type OutageReporter,
  type Redact,
  warnPerOutage,
} from "../_sinks.ts";
import { fail, instantProblem, requireTenantId, storableTextProblem } from "../_input.ts";
import { auditOptions } from "../_options.ts";
import {
  type AuditChainExpectation,
  canonicalJson,
  checkpointValid,
  pastHead,
  requireWellFormedTenantId,
  signCheckpoint,
  verifiedAuditRecords,
  verifyAuditChain,
} from "./chain.ts";
import {
  type ApiKeyAuditOptions,
  AUDIT_ACTIONS,
  type AuditAction,
  type AuditAppend,
  type AuditChainState,
  type AuditChange,
  type AuditCheckpoint,
  type AuditContext,
  type AuditEntry,
  type AuditLogPage,
  type AuditLogQuery,
  type AuditRecord,
  type AuditValue,
  type AuditVerification,
  type AuditVerifyRange,
  type StoredAuditRecord,
} from "./types.ts";

const PAGE = 500;
/**
 * Tenants whose records since their last checkpoint an instance counts, and
 * whose last checkpoint it signed it remembers, at most.
 */
const MAX_TENANTS_COUNTED = 10_000;
const MAX_LIMIT = 100;
const DEFAULT_LIMIT = 25;
const MAX_TEXT = 200;

/** A run of a tenant's records to verify (see `AuditLog`'s `#range`). */
type AuditRange = {
  fromSeq?: number;
  toSeq?: number;
  checkpoint?: AuditChainExpectation["checkpoint"];
};

/** What the records of an `AuditRange` must match, with the chain's head and anchor. */
type AuditRangeExpectation = AuditChainExpectation & Pick<AuditChainState, "head" | "anchor">;

/** An optional short string of a context, checked (stored: see `storableTextProblem`). */
function optionalText(value: unknown, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value.length === 0 || value.length > MAX_TEXT) {
    throw new TypeError(`${name} must be a string of 1 to ${MAX_TEXT} characters`);
  }
  const problem = storableTextProblem(value);
  if (problem !== undefined) throw new TypeError(`${name} ${problem}`);
  return value;
}

/** An optional short string of a query, checked (`api_key_invalid_input` naming `field`). */
function queryText(value: unknown, field: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value === "" || value.length > MAX_TEXT) {
    fail(field, `must be a string of 1 to ${MAX_TEXT} characters`);
  }
  const problem = storableTextProblem(value);
  if (problem !== undefined) fail(field, problem);
  return value;
}

/** Sets `tenantId` in `map`; past MAX_TENANTS_COUNTED tenants, the one set first is dropped. */
function setBounded<T>(map: Map<string, T>, tenantId: string, value: T): void {
  if (!map.has(tenantId) && map.size >= MAX_TENANTS_COUNTED) map.delete(map.keys().next().value!);
  map.set(tenantId, value);
}

/**
 * The refusal to sign over a chain that does not verify: an `Error` named
 * `AuditChainError` saying the first record found and how (never a secret).
 */
function chainError(
  answer: Pick<Extract<AuditVerification, { ok: false }>, "seq" | "problem" | "detail">,
): Error {
  const error = new Error(
    `the audit chain does not verify at seq ${answer.seq} (${answer.problem}: ${answer.detail})`,
  );
  error.name = "AuditChainError";
  return error;
}

/**
 * Logs, with one `console.error`, that an automatic checkpoint of `tenantId`
 * found its chain broken: the tenant and where and how (the `AuditChainError`'s
 * message, never a secret), each time one finds it.
 */
function logBrokenChain(tenantId: string, error: Error, redact: Redact): void {
  logLine(
    console.error,
    redact(
      `api-keys: the audit checkpoint of tenant ${
        JSON.stringify(tenantId)
      } found the chain broken: ${error.message}`,
    ),
  );
}

/**
 * A stored record as the service answers it. One no writer makes (a body that is not an entry, a
 * time that cannot be read: edited in the database) throws an `AuditChainError` naming it, as
 * verification does.
 */
export function toAuditRecord(stored: StoredAuditRecord): AuditRecord {
  const { seq } = stored;
  let entry: AuditEntry | undefined;
  try {
    entry = JSON.parse(stored.body);
  } catch {
    // named below
  }
  if (typeof entry !== "object" || entry === null || Array.isArray(entry)) {
    throw chainError({ seq, problem: "edited", detail: "the record's body cannot be read" });
  }
  if (Number.isNaN(stored.at.getTime())) {
    throw chainError({ seq, problem: "edited", detail: "the record's time cannot be read" });
  }
  return {
    ...entry,
    tenantId: stored.tenantId,
    seq,
    at: stored.at.toISOString(),
    prevHash: stored.prevHash,
    hash: stored.hash,
  };
}

/** A change of one field from `before` to `after` (dates as ISO strings). */
export function change(before: unknown, after: unknown): AuditChange {
  const value = (v: unknown): AuditValue =>
    v === undefined ? null : JSON.parse(canonicalJson(v)) as AuditValue;
  return { before: value(before), after: value(after) };
}

/** The fields of a new key as changes from nothing (never its hash or pepper version). */
export function createdChanges(record: {
  name: string;
  environment: string;
  scopes: readonly string[];
  allowedIpCidrs?: readonly string[];
  expiresAt: Date | null;
  createdBy: string | null;
}): Record<string, AuditChange> {
  return {
    name: change(null, record.name),
    environment: change(null, record.environment),
    scopes: change(null, record.scopes),
    allowedIpCidrs: change(null, record.allowedIpCidrs ?? []),
    expiresAt: change(null, record.expiresAt),
    createdBy: change(null, record.createdBy),
  };
}

/** The audit log of one service. */
export class AuditLog {
  readonly #access: AuditAccess;
  readonly #options: Required<ApiKeyAuditOptions>;
  readonly #clock: () => Date;
  readonly #emit: Dispatch<ApiKeyEvent> | undefined;
  readonly #since = new Map<string, { count: number; atMs: number }>();
  /** Per tenant, the head of the last checkpoint this instance signed: the next verifies from it. */
  readonly #signed = new Map<string, { seq: number; hash: string }>();
  /** Tenants with an automatic checkpoint running: a record meanwhile starts no other one. */
  readonly #checkpointing = new Set<string>();
  /** Failures of the background writes but a broken chain: once per outage. */
  readonly #failed: OutageReporter;
  /** The service's redaction of its log lines. */
  readonly #redact: Redact;
  /** Records and checkpoints being written in the background (see `settled`). */
  readonly #pending = new Set<Promise<void>>();

  /** Checks `options` (a `TypeError` naming `label`) over the storage's audit capability. */
  constructor(
    access: AuditAccess,
    options: unknown,
    clock: () => Date,
    emit: Dispatch<ApiKeyEvent> | undefined,
    label: string,
    redact: Redact = redactApiKeys,
  ) {
    this.#failed = warnPerOutage("audit", redact);
    this.#redact = redact;
    this.#options = auditOptions(options, label);
    this.#access = access;
    this.#clock = clock;
    this.#emit = emit;
  }

  /**
   * `context` checked (a `TypeError` naming the field), its actor
   * `defaultActor` when it has none: what `entry` records of it.
   */
  context(
    context: AuditContext | undefined,
    defaultActor: "app" | "system",
  ): { actor: string; requestId: string | undefined; clientAddress: string | undefined } {
    const c = (context ?? {}) as Record<string, unknown>;
    return {
      actor: optionalText(c.actor, "the audit context's actor") ?? defaultActor,
      requestId: optionalText(c.requestId, "the audit context's requestId"),
      clientAddress: optionalText(c.clientAddress, "the audit context's clientAddress"),
    };
  }

  /**
   * The record of `action` on `key` (null: tenant-wide) by the context's
   * actor (else `defaultActor`), with the changed fields and its outcome;
   * its context is checked.
   */
  entry(
    tenantId: string,
    action: AuditAction,
    context: AuditContext | undefined,
    defaultActor: "app" | "system",
    key: { id: string; prefix: string | null } | null,
    changes: Record<string, AuditChange>,
    outcome: AuditEntry["outcome"] = "success",
  ): AuditAppend {
    const { actor, requestId, clientAddress } = this.context(context, defaultActor);
    const entry: AuditEntry = {
      v: 1,
      action,
      actor,
      keyId: key?.id ?? null,
      prefix: key?.prefix ?? null,
      requestId: requestId ?? null,
      clientAddress: clientAddress ?? null,
      outcome,
      changes,
    };
    return {
      tenantId,
      body: canonicalJson(entry),
      at: this.#clock(),
      keyId: entry.keyId,
      actor,
      action,
    };
  }

  /** Whether the option `refusedVerifications` is on. */
  get recordsRefusals(): boolean {
    return this.#options.refusedVerifications;
  }

  /**
   * Records the refused verifications of `keyId` in the UTC hour starting at
   * `hour` (counts by code, zeros left out), actor `system`. Detached (see
   * `#detach`).
   */
  refusals(keyId: string, tenantId: string, hour: Date, refused: Record<string, number>): void {
    const audit = this.entry(
      tenantId,
      "key.verifications_refused",
      undefined,
      "system",
      {
        id: keyId,
        prefix: null,
      },
      { hour: change(null, hour), refused: change(null, refused) },
      "refused",
    );
    this.#detach(() => this.append(audit));
  }

  /**
   * Appends `audit` alone (a change outside the key records), then counts it;
   * a `TypeError` for a tenant id that is not well-formed UTF-16.
   */
  async append(audit: AuditAppend): Promise<void> {
    requireWellFormedTenantId(audit.tenantId);
    await this.#access.append(audit);
    this.appended(audit.tenantId);
  }

  /**
   * Counts a record of `tenantId` written by this instance; past
   * `checkpointEvery` of them or `checkpointIntervalMs`, signs a checkpoint
   * of the head and emits it (detached, one per tenant at a time). The count
   * starts again once a checkpoint checked the chain (signed it, or found it
   * broken: logged each time, see `logBrokenChain`); after another failure
   * (as in `#detach`), the next record tries again.
   */
  appended(tenantId: string): void {
    const nowMs = this.#clock().getTime();
    let since = this.#since.get(tenantId);
    if (since === undefined) {
      since = { count: 0, atMs: nowMs };
      // Bounded: past MAX_TENANTS_COUNTED, the longest-counted tenant is dropped, and checkpointed
      // now if it has records since its last one (never left uncounted: 10,001 tenants writing in
      // turn would otherwise never reach a checkpoint).
      if (this.#since.size >= MAX_TENANTS_COUNTED) {
        const [dropped, was] = this.#since.entries().next().value!;
        this.#since.delete(dropped);
        if (was.count > 0) this.#checkpointDue(dropped, was.count, nowMs);
      }
      this.#since.set(tenantId, since);
    }
    since.count++;
    const { checkpointEvery, checkpointIntervalMs } = this.#options;
    if (since.count < checkpointEvery && nowMs - since.atMs < checkpointIntervalMs) return;
    this.#checkpointDue(tenantId, since.count, nowMs);
  }

  /**
   * Signs a checkpoint of `tenantId`'s head and emits it (detached, one per tenant at a time),
   * `counted` of its records due at `nowMs`; see `appended`.
   */
  #checkpointDue(tenantId: string, counted: number, nowMs: number): void {
    if (this.#checkpointing.has(tenantId)) return;
    this.#checkpointing.add(tenantId);
    // The records counted are checked (signed, or found broken): those appended meanwhile count
    // toward the next checkpoint. A failure to check them counts them still.
    const checked = () => {
      const now = this.#since.get(tenantId);
      if (now !== undefined) {
        Object.assign(now, { count: Math.max(0, now.count - counted), atMs: nowMs });
      }
    };
    this.#detach(async () => {
      try {
        const checkpoint = await this.checkpoint(tenantId);
        checked();
        if (checkpoint !== null) {
          this.#emit?.({ type: "api_key.audit_checkpoint", at: this.#clock(), checkpoint });
        }
      } catch (error) {
        if (!(error instanceof Error) || error.name !== "AuditChainError") throw error;
        checked(); // found broken: logged again at the next checkpoint due, not at every record
        logBrokenChain(tenantId, error, this.#redact);
      } finally {
        this.#checkpointing.delete(tenantId);
      }
    });
  }

  /**
   * Records what the library's jobs did, from their events: expiry notices,
   * ended rotations (actor `system`) and exposed keys (actor `leak-report`).
   * Detached (see `#detach`).
   */
  observe(event: ApiKeyEvent): void {
    this.#detach(() => this.#observe(event));
  }

  /** Resolves once every record and checkpoint written in the background has settled. */
  async settled(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all(this.#pending);
  }

  /**
   * Runs `write` in the background, `settled` waiting for it: a failure (a
   * record lost) is warned about once per outage, its end logged at the next
   * write that succeeds (see `warnPerOutage`).
   */
  #detach(write: () => Promise<void> | undefined): void {
    const pending = new Promise<void>((resolve) => resolve(write())).then(
      () => this.#failed.succeeded(),
      (error) => this.#failed.failed(error),
    ).finally(() => this.#pending.delete(pending));
    this.#pending.add(pending);
  }

  #observe(event: ApiKeyEvent): Promise<void> | undefined {
    let audit: AuditAppend | undefined;
    if (event.type === "api_key.expiring") {
      audit = this.entry(event.tenantId, "key.expiring", undefined, "system", {
        id: event.keyId,
        prefix: event.prefix,
      }, {
        expiresAt: change(null, event.expiresAt),
        thresholdMs: change(null, event.thresholdMs),
      });
    } else if (event.type === "api_key.rotation_completed") {
      audit = this.entry(event.tenantId, "key.rotation_completed", undefined, "system", {
        id: event.oldKeyId,
        prefix: event.oldPrefix,
      }, { endedAt: change(null, event.endedAt), newKeyId: change(null, event.newKeyId) });
    } else if (event.type === "api_key.exposed") {
      audit = this.entry(event.tenantId, "key.exposed", { actor: "leak-report" }, "system", {
        id: event.keyId,
        prefix: event.prefix,
      }, { source: change(null, event.source) });
    }
    return audit === undefined ? undefined : this.append(audit);
  }

  /**
   * A checkpoint of `tenantId`'s head read now (`null` for an empty chain),
   * signed once the chain verifies up to it: from the last checkpoint this
   * instance signed for the tenant (its record still with its hash), else
   * (or pruned past it) from the anchor. Rejects with an `AuditChainError`
   * when it does not verify.
   */
  async checkpoint(tenantId: string): Promise<AuditCheckpoint | null> {
    requireTenantId(tenantId);
    const signed = this.#signed.get(tenantId);
    const { expected, answer } = await this.#verified(tenantId, {
      fromSeq: signed?.seq,
      checkpoint: signed,
    });
    if (!answer.ok) throw chainError(answer);
    if (expected.head === null) return null;
    const { seq, hash } = expected.head;
    const checkpoint = await signCheckpoint(
      this.#options.checkpointKey,
      tenantId,
      seq,
      hash,
      this.#clock(),
    );
    this.#remember(tenantId, seq, hash);
    return checkpoint;
  }

  /** Keeps `seq` and `hash` as `tenantId`'s last checkpoint signed, unless it has a later one. */
  #remember(tenantId: string, seq: number, hash: string): void {
    const signed = this.#signed.get(tenantId);
    if (signed === undefined || signed.seq <= seq) {
      setBounded(this.#signed, tenantId, { seq, hash });
    }
  }

  /** A page of `tenantId`'s records, newest first (see `ApiKeysService.auditLog`). */
  async page(tenantId: string, query: AuditLogQuery = {}): Promise<AuditLogPage> {
    requireTenantId(tenantId);
    const q = (query ?? {}) as Record<string, unknown>;
    const limit = q.limit ?? DEFAULT_LIMIT;
    if (!Number.isSafeInteger(limit) || (limit as number) < 1 || (limit as number) > MAX_LIMIT) {
      fail("limit", `must be an integer from 1 to ${MAX_LIMIT}`);
    }
    const cursor = q.cursor ?? null;
    if (cursor !== null && (typeof cursor !== "string" || !/^[1-9]\d{0,15}$/.test(cursor))) {
      fail("cursor", "is not one this log answered");
    }
    for (const name of ["from", "to"]) {
      const value = q[name];
      if (value !== undefined && (!(value instanceof Date) || Number.isNaN(value.getTime()))) {
        fail(name, "must be a valid Date");
      }
      const problem = value === undefined ? undefined : instantProblem((value as Date).getTime());
      if (problem !== undefined) fail(name, problem);
    }
    if (q.action !== undefined && !AUDIT_ACTIONS.includes(q.action as AuditAction)) {
      fail("action", `must be one of ${AUDIT_ACTIONS.join(", ")}`);
    }
    const { records } = await this.#access.read({
      tenantId,
      order: "desc",
      limit: (limit as number) + 1,
      beforeSeq: cursor === null ? undefined : Number(cursor),
      from: q.from as Date | undefined,
      to: q.to as Date | undefined,
      keyId: queryText(q.keyId, "keyId"),
      actor: queryText(q.actor, "actor"),
      action: q.action as AuditAction | undefined,
    });
    const page = records.slice(0, limit as number);
    return {
      records: page.map(toAuditRecord),
      nextCursor: records.length > page.length ? String(page.at(-1)!.seq) : null,
    };
  }

  /**
   * `tenantId`'s records in `seq` order from `afterSeq` to `toSeq`, a page at
   * a time (never all in memory). `first`, the first page read with the
   * chain's state (in one snapshot on the built-in storages; a custom storage
   * may read them apart, the head newer than it), is followed by one more
   * read when it ends short of `toSeq`.
   */
  async *#records(
    tenantId: string,
    afterSeq: number | undefined,
    toSeq: number,
    first?: StoredAuditRecord[],
  ): AsyncGenerator<StoredAuditRecord> {
    let after = afterSeq;
    let page = first;
    let reread = first !== undefined;
    for (;;) {
      page ??= (await this.#access.read({
        tenantId,
        order: "asc",
        limit: PAGE,
        afterSeq: after,
        beforeSeq: toSeq + 1,
      })).records;
      for (const record of page) yield record;
      after = page.at(-1)?.seq ?? after;
      if ((after !== undefined && after >= toSeq) || (page.length < PAGE && !reread)) return;
      reread = false;
      page = undefined;
    }
  }

  /** Verifies `tenantId`'s chain (see `ApiKeysService.verifyAuditLog`). */
  async verify(tenantId: string, range: AuditVerifyRange = {}): Promise<AuditVerification> {
    requireTenantId(tenantId);
    const { fromSeq, toSeq, checkpoint } = range ?? {};
    for (const [name, value] of Object.entries({ fromSeq, toSeq })) {
      if (value !== undefined && (!Number.isSafeInteger(value) || value < 1)) {
        throw new TypeError(`the audit range's ${name} must be a positive integer`);
      }
    }
    if (fromSeq !== undefined && toSeq !== undefined && fromSeq > toSeq) {
      // An empty range verifies nothing: no `ok` for it.
      throw new TypeError("the audit range's fromSeq must not be past its toSeq");
    }
    if (checkpoint !== undefined && toSeq !== undefined && toSeq < Number(checkpoint?.seq)) {
      // It could only be found missing: the records to it are past the range.
      throw new TypeError("the audit range's toSeq must not be before the checkpoint's seq");
    }
    if (checkpoint !== undefined) {
      const valid = checkpoint?.tenantId === tenantId &&
        await checkpointValid(this.#options.checkpointKey, checkpoint);
      if (!valid) {
        return {
          ok: false,
          problem: "checkpoint_invalid",
          seq: Number(checkpoint?.seq) || 0,
          detail: "the checkpoint is not one this app signed for this tenant",
          checked: 0,
        };
      }
    }
    const { answer, expected, through } = await this.#verified(tenantId, {
      fromSeq,
      toSeq,
      checkpoint,
    });
    if (!answer.ok || through !== undefined) return answer;
    const headSeq = expected.head?.seq ?? 0;
    if (toSeq !== undefined && toSeq <= headSeq) return answer;
    return await this.#probePastHead(tenantId, headSeq, answer.checked, toSeq) ?? answer;
  }

  /**
   * Verifies `tenantId`'s records over `range` (see `#range`; a range ending
   * before the head must reach its `toSeq`, else `truncated`, and the next
   * record must link to it, see `#linkedPast`): the answer,
   * with what it was checked against. Records missing because a prune
   * dropped them meanwhile (committed between two pages: the anchor is now
   * past them) are verified again, once, from the new anchor.
   */
  async #verified(tenantId: string, range: AuditRange): Promise<{
    answer: AuditVerification;
    expected: AuditRangeExpectation;
    through: number | undefined;
  }> {
    const pass = async () => {
      const { records, expected, through, pastHead } = await this.#range(tenantId, range);
      if (pastHead !== undefined) {
        // The caller knows of records up to `fromSeq - 1`; the head says they were never written.
        const answer: AuditVerification = {
          ok: false,
          problem: "truncated",
          seq: pastHead + 1,
          detail: `records ${pastHead + 1} to ${range.fromSeq! - 1} are missing (the range ` +
            "starts past the head)",
          checked: 0,
        };
        return { answer, expected, through };
      }
      let answer = await verifyAuditChain(records, expected);
      // A range ending before the head: the head row proves its records existed.
      const reached = answer.ok ? answer.head?.seq ?? expected.anchor.seq - 1 : Infinity;
      if (through !== undefined && reached < through) {
        answer = {
          ok: false,
          problem: "truncated",
          seq: reached + 1,
          detail: `records ${reached + 1} to ${through} are missing (the head is past them)`,
          checked: answer.checked,
        };
      } else if (through !== undefined && answer.ok && answer.head?.seq === through) {
        answer = await this.#linkedPast(tenantId, answer.head, answer.checked) ?? answer;
      }
      return { answer, expected, through };
    };
    const first = await pass();
    const { answer } = first;
    const pruned = !answer.ok && (answer.problem === "deleted" || answer.problem === "truncated") &&
      await this.#prunedPast(tenantId, answer.seq);
    return pruned ? await pass() : first;
  }

  /**
   * What verifying `tenantId`'s records from `fromSeq` to `toSeq` reads: the
   * records, a page at a time, and what they must match. To the head read
   * here (a record appended meanwhile is past it) without `toSeq` or with
   * one at or past the head (its hash checked); with one before it, the
   * records to `toSeq`, which the walk must reach (`through`: the head row
   * proves they existed). From `fromSeq`, its record's `prevHash` trusted
   * (`trusted`: no head past `fromSeq` is checked); without it (or at or
   * before the anchor: pruned records are not missing), from the chain's
   * anchor, read with no lower bound (a row at seq 0 or below, which only the
   * database owner writes, is read first and named `inserted`). A checkpoint before `fromSeq` moves the start back to its record:
   * what it proves is never skipped (a chain rewritten behind it is found).
   */
  async #range(tenantId: string, range: AuditRange): Promise<{
    records: AsyncIterable<StoredAuditRecord>;
    expected: AuditRangeExpectation;
    trusted: boolean;
    through: number | undefined;
    pastHead: number | undefined;
  }> {
    const { toSeq, checkpoint } = range;
    const fromSeq = range.fromSeq !== undefined && checkpoint !== undefined &&
        checkpoint.seq < range.fromSeq
      ? checkpoint.seq
      : range.fromSeq;
    const after = fromSeq === undefined ? undefined : fromSeq - 1;
    const query = {
      tenantId,
      order: "asc",
      limit: PAGE,
      afterSeq: after,
      beforeSeq: (toSeq ?? Number.MAX_SAFE_INTEGER - 1) + 1,
    } as const;
    const read = await this.#access.read(query);
    const { state } = read;
    const trusted = fromSeq !== undefined && fromSeq > state.anchor.seq;
    const headSeq = state.head?.seq ?? 0;
    const toHead = toSeq === undefined || (state.head !== null && toSeq >= headSeq);
    const head = toHead && !(trusted && fromSeq > headSeq) ? state.head : null;
    const last = toHead ? headSeq : toSeq;
    // A storage reading the rows and the head apart may read the rows before a record the head
    // has: `fromSeq`'s `prevHash` is read again, not taken as empty.
    const rows = trusted && read.records.length === 0 && last >= fromSeq
      ? (await this.#access.read(query)).records
      : read.records;
    const records = rows.filter((record) => record.seq <= last);
    const anchor = trusted ? { seq: fromSeq, prevHash: records[0]?.prevHash ?? "" } : state.anchor;
    return {
      records: this.#records(tenantId, after, last, records),
      expected: { tenantId, anchor, head, checkpoint },
      trusted,
      through: toHead || state.head === null ? undefined : toSeq,
      // From past the record after the head: the head lies before records the range needs.
      pastHead: fromSeq !== undefined && fromSeq > headSeq + 1 ? headSeq : undefined,
    };
  }

  /**
   * A range ending at `last`, before the head: record `last.seq + 1` (which
   * the head row proves was written) must link to `last`'s hash, else `last`
   * is `edited` (its hash recomputed after an edit); `truncated` when it is
   * missing. `undefined` when it links (the record is read, never answered).
   */
  async #linkedPast(
    tenantId: string,
    last: { seq: number; hash: string },
    checked: number,
  ): Promise<AuditVerification | undefined> {
    const seq = last.seq + 1;
    const [next] = (await this.#access.read({
      tenantId,
      order: "asc",
      limit: 1,
      afterSeq: last.seq,
      beforeSeq: seq + 1,
    })).records;
    if (next === undefined) {
      const detail = `record ${seq} is missing (the head is past it)`;
      return { ok: false, problem: "truncated", seq, detail, checked };
    }
    if (next.prevHash === last.hash) return undefined;
    const detail = "the next record does not link to this record's hash";
    return { ok: false, problem: "edited", seq: last.seq, detail, checked };
  }

  /** Whether `tenantId`'s chain is now anchored past `seq` (a prune dropped it). */
  async #prunedPast(tenantId: string, seq: number): Promise<boolean> {
    const { state } = await this.#access.read({ tenantId, order: "desc", limit: 1 });
    return state.anchor.seq > seq;
  }

  /**
   * `inserted` when a record of `tenantId` lies past `headSeq` (up to
   * `toSeq`, when given) and the head, read again after it, is still below
   * it (it was written without the append that advances the head in the
   * same transaction).
   */
  async #probePastHead(
    tenantId: string,
    headSeq: number,
    checked: number,
    toSeq?: number,
  ): Promise<AuditVerification | undefined> {
    const [next] = (await this.#access.read({
      tenantId,
      order: "asc",
      limit: 1,
      afterSeq: headSeq,
      beforeSeq: toSeq === undefined ? undefined : toSeq + 1,
    })).records;
    if (next === undefined) return undefined;
    const { head } = (await this.#access.read({ tenantId, order: "desc", limit: 1 })).state;
    if (head !== null && head.seq >= next.seq) return undefined;
    return pastHead(next.seq, head?.seq ?? 0, checked);
  }

  /**
   * `tenantId`'s records from `fromSeq` (default the first kept) to the head
   * read at the start as JSON Lines, each line ending in `\n`: a `record` line
   * per record, a `checkpoint` line after every `checkpointEvery`-th record
   * and after the last one (see docs/operations.md). Verified as it streams
   * (from `fromSeq`'s `prevHash`, and through the last checkpoint this
   * instance signed: from its record when it lies before `fromSeq`, those
   * records verified, not sent): at the first record that does not verify,
   * it throws an `AuditChainError`, having signed no checkpoint at or past it.
   */
  async *export(tenantId: string, fromSeq?: number): AsyncGenerator<string> {
    requireTenantId(tenantId);
    if (fromSeq !== undefined && (!Number.isSafeInteger(fromSeq) || fromSeq < 1)) {
      throw new TypeError("the export's fromSeq must be a positive integer");
    }
    const { checkpointKey, checkpointEvery } = this.#options;
    const sign = async (r: StoredAuditRecord) => {
      const checkpoint = await signCheckpoint(
        checkpointKey,
        tenantId,
        r.seq,
        r.hash,
        this.#clock(),
      );
      if (remembers) this.#remember(tenantId, r.seq, r.hash);
      return `${JSON.stringify({ type: "checkpoint", ...checkpoint })}\n`;
    };
    const signed = this.#signed.get(tenantId);
    const { records, expected, trusted } = await this.#range(tenantId, {
      fromSeq,
      checkpoint: signed,
    });
    // What it signs is kept as the last checkpoint when the walk verified from the anchor or
    // through the last one kept (the walk starts at it when it lies before `fromSeq`), not from a
    // trusted prevHash past it.
    const remembers = !trusted || signed !== undefined;
    const walk = verifiedAuditRecords(records, expected);
    // A record's checkpoint waits for the next record's link to it (or the end of the walk).
    let due: StoredAuditRecord | undefined;
    let last: StoredAuditRecord | undefined;
    let step = await walk.next();
    for (; !step.done; step = await walk.next()) {
      if (due !== undefined) yield await sign(due);
      due = undefined;
      // Records walked from the checkpoint before `fromSeq`: verified, not sent.
      if (fromSeq !== undefined && step.value.seq < fromSeq) continue;
      last = step.value;
      due = last.seq % checkpointEvery === 0 ? last : undefined;
      yield `${JSON.stringify({ type: "record", ...toAuditRecord(last) })}\n`;
    }
    if (!step.value.ok) throw chainError(step.value);
    if (last !== undefined) yield await sign(last);
  }

  /** Drops `tenantId`'s records written before `before` (see `ApiKeysService.pruneAuditLog`). */
  async prune(tenantId: string, before: Date): Promise<number> {
    requireTenantId(tenantId);
    const prune = this.#access.prune;
    if (prune === undefined) {
      throw new TypeError("pruneAuditLog needs the storage capability pruneAudit");
    }
    if (!(before instanceof Date) || Number.isNaN(before.getTime())) {
      throw new TypeError("pruneAuditLog's before must be a valid Date");
    }
    const problem = instantProblem(before.getTime());
    if (problem !== undefined) throw new TypeError(`pruneAuditLog's before ${problem}`);
    return await prune(tenantId, before);
  }
}
