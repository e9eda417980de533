/**
 * The hash chain of the audit log: canonical JSON, each record's hash, the
 * verification of a run of records and the signed checkpoints. Pure
 * functions over Web Crypto (SHA-256, HMAC-SHA-256): a tenant can run
 * `verifyAuditChain` on an export's lines (read by `storedAuditRecord`) with
 * no access to the database.
 *
 * @module
 */
import { hasLoneSurrogate } from "../../telemetry/_text.ts";
import type {
  AuditChainState,
  AuditCheckpoint,
  AuditExportLine,
  AuditVerification,
  StoredAuditRecord,
} from "./types.ts";

/** The previous hash of a chain's first record: 64 zeros. */
export const GENESIS_HASH: string = "0".repeat(64);

const encoder = new TextEncoder();

/**
 * Whether `tenantId` is well-formed UTF-16: a lone surrogate becomes U+FFFD in
 * the UTF-8 the chain hashes and signs, so two ids would share one chain's text.
 */
export function wellFormedTenantId(tenantId: string): boolean {
  return !hasLoneSurrogate(tenantId);
}

/** `tenantId`, or a `TypeError` when it is not well-formed UTF-16 (`wellFormedTenantId`). */
export function requireWellFormedTenantId(tenantId: string): string {
  if (!wellFormedTenantId(tenantId)) {
    throw new TypeError("the audit tenant id must be well-formed UTF-16 (no lone surrogate)");
  }
  return tenantId;
}

function hex(bytes: ArrayBuffer): string {
  return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** How deep `canonicalJson` nests arrays and objects: deeper is a `TypeError`, not a stack overflow. */
const CANONICAL_JSON_MAX_DEPTH = 64;

/**
 * `value` as canonical JSON: object keys sorted by code unit, no whitespace,
 * `undefined` members left out, dates as ISO 8601; a non-finite number,
 * another type or arrays and objects nested past `CANONICAL_JSON_MAX_DEPTH`
 * levels throw a `TypeError`.
 *
 * @example
 * ```ts
 * import { canonicalJson } from "./chain.ts";
 * canonicalJson({ b: 1, a: [true, null] }); // '{"a":[true,null],"b":1}'
 * ```
 */
export function canonicalJson(value: unknown): string {
  return canonicalAt(value, 0);
}

function canonicalAt(value: unknown, depth: number): string {
  if (value === null || typeof value === "boolean" || typeof value === "string") {
    return JSON.stringify(value);
  }
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new TypeError("canonicalJson: a number is not finite");
    return JSON.stringify(value);
  }
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (typeof value !== "object") {
    throw new TypeError(`canonicalJson: cannot encode a ${typeof value}`);
  }
  if (depth >= CANONICAL_JSON_MAX_DEPTH) {
    throw new TypeError(
      `canonicalJson: arrays and objects nest past ${CANONICAL_JSON_MAX_DEPTH} levels`,
    );
  }
  const inner = (v: unknown) => canonicalAt(v, depth + 1);
  if (Array.isArray(value)) return `[${value.map(inner).join(",")}]`;
  const members = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${JSON.stringify(k)}:${inner(v)}`);
  return `{${members.join(",")}}`;
}

/**
 * How many member names valid JSON text `json` holds (strings followed by
 * `:`), read in one pass: more than its value's canonical JSON holds means a
 * name given twice in one object, which `JSON.parse` reads as the last one.
 */
function memberNames(json: string): number {
  const colon = /[ \t\n\r]*:/y;
  let count = 0;
  for (let open = json.indexOf('"'); open !== -1;) {
    let close = json.indexOf('"', open + 1);
    for (; close !== -1;) {
      let backslashes = 0;
      while (json.charCodeAt(close - 1 - backslashes) === 0x5c) backslashes++;
      if (backslashes % 2 === 0) break;
      close = json.indexOf('"', close + 1);
    }
    if (close === -1) break; // not JSON: never reached after JSON.parse
    colon.lastIndex = close + 1;
    if (colon.test(json)) count++;
    open = json.indexOf('"', close + 1);
  }
  return count;
}

/**
 * A record's hash: SHA-256 (lowercase hex) of `prevHash`, `tenantId`, `seq`,
 * `at` (ISO 8601 UTC with ms) and `body`, joined by `\n`, in UTF-8, as
 * migration 0017's `api_key_audit_append` computes it.
 *
 * @example
 * ```ts
 * import { auditHash, GENESIS_HASH } from "./chain.ts";
 * const hash = await auditHash(GENESIS_HASH, "t1", 1, new Date(0), "{}");
 * hash.length; // 64
 * ```
 */
export async function auditHash(
  prevHash: string,
  tenantId: string,
  seq: number,
  at: Date,
  body: string,
): Promise<string> {
  const text = `${prevHash}\n${tenantId}\n${seq}\n${at.toISOString()}\n${body}`;
  return hex(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
}

/** Imports an HMAC-SHA-256 key from a string of at least 32 bytes. */
async function hmacKey(secret: string): Promise<CryptoKey> {
  const bytes = encoder.encode(secret);
  if (bytes.length < 32) throw new TypeError("the audit checkpoint key must be at least 32 bytes");
  return await crypto.subtle.importKey("raw", bytes, { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
    "verify",
  ]);
}

/** The text a checkpoint's MAC signs: its tenant, seq, hash and moment. */
function checkpointText(
  tenantId: string,
  seq: number,
  hash: string,
  at: string,
): Uint8Array<ArrayBuffer> {
  return encoder.encode(`api-kit audit checkpoint\n${tenantId}\n${seq}\n${hash}\n${at}`);
}

/**
 * A checkpoint of the head (`seq`, `hash`) of `tenantId`'s chain, signed
 * with `secret` (HMAC-SHA-256; at least 32 bytes) at `at`; a `TypeError` for
 * a `tenantId` that is not well-formed UTF-16 (a lone surrogate).
 *
 * @example
 * ```ts
 * import { signCheckpoint } from "./chain.ts";
 * const checkpoint = await signCheckpoint(
 *   "an-audit-key-of-at-least-thirty-two-bytes", "t1", 1, "0".repeat(64), new Date(0),
 * );
 * checkpoint.mac.length; // 64
 * ```
 */
export async function signCheckpoint(
  secret: string,
  tenantId: string,
  seq: number,
  hash: string,
  at: Date,
): Promise<AuditCheckpoint> {
  requireWellFormedTenantId(tenantId);
  const key = await hmacKey(secret);
  const when = at.toISOString();
  const mac = hex(await crypto.subtle.sign("HMAC", key, checkpointText(tenantId, seq, hash, when)));
  return { tenantId, seq, hash, at: when, mac };
}

/**
 * Whether `checkpoint`'s MAC is `secret`'s (compared in constant time by Web
 * Crypto) over fields of the types signed: a string `tenantId` that is
 * well-formed UTF-16 (with a lone surrogate it would sign another's text), a `seq` that
 * is a safe integer of at least 1, a `hash` of 64 lowercase hex digits and a
 * string `at` (an ISO 8601 moment: at most 30 characters). (A `seq` of `"4"`
 * signs the same text as `4` but would never match a record: it is refused,
 * not left unchecked.)
 *
 * @example
 * ```ts
 * import { checkpointValid, signCheckpoint } from "./chain.ts";
 * const secret = "an-audit-key-of-at-least-thirty-two-bytes";
 * const checkpoint = await signCheckpoint(secret, "t1", 1, "0".repeat(64), new Date(0));
 * await checkpointValid(secret, checkpoint); // true
 * ```
 */
export async function checkpointValid(
  secret: string,
  checkpoint: AuditCheckpoint,
): Promise<boolean> {
  const { tenantId, seq, hash, at, mac } = checkpoint;
  if (typeof mac !== "string" || !/^[0-9a-f]{64}$/.test(mac)) return false;
  if (typeof at !== "string" || at.length > 30) return false;
  if (typeof tenantId !== "string" || !wellFormedTenantId(tenantId)) return false;
  if (!Number.isSafeInteger(seq) || seq < 1) return false;
  if (typeof hash !== "string" || !/^[0-9a-f]{64}$/.test(hash)) return false;
  const bytes = new Uint8Array(32);
  for (let i = 0; i < 32; i++) bytes[i] = parseInt(mac.slice(i * 2, i * 2 + 2), 16);
  const key = await hmacKey(secret);
  return await crypto.subtle.verify("HMAC", key, bytes, checkpointText(tenantId, seq, hash, at));
}

/** What `verifyAuditChain` checks the records against. */
export interface AuditChainExpectation extends Partial<AuditChainState> {
  /** The tenant every record must belong to. */
  tenantId: string;
  /**
   * A checkpoint kept elsewhere (already checked by `checkpointValid`): the
   * record at its `seq` must exist with its hash (pruned up to it, the
   * anchor's `prevHash` must be its hash), so a truncated or rewritten tail
   * is found. One before that is not checked (pruned past it): the answer then
   * says `checkpoint: "before_prune"`.
   */
  checkpoint?: Pick<AuditCheckpoint, "seq" | "hash">;
}

type Broken = Extract<AuditVerification, { ok: false }>;

/**
 * The answer for a record at `seq` past the chain's head at `headSeq`
 * (`inserted`), after `checked` records verified.
 */
export function pastHead(seq: number, headSeq: number, checked: number): Broken {
  return {
    ok: false,
    problem: "inserted",
    seq,
    detail: `the record is past the chain's head ${headSeq}`,
    checked,
  };
}

/**
 * Verifies a run of a tenant's records in `seq` order (a stream: one record
 * is held ahead): each hash recomputed, each `prevHash` the previous
 * record's, sequence numbers from the anchor (default 1 after 64 zeros)
 * without gaps, none past the head, none missing before the head or the
 * checkpoint, the head's and the checkpoint's records with their hashes. Answers the first record found edited, deleted, inserted,
 * reordered (two records whose hashes fit each other's places) or the first
 * one missing from a truncated tail.
 *
 * @example
 * ```ts
 * import { verifyAuditChain } from "./chain.ts";
 * const answer = await verifyAuditChain([], { tenantId: "t1" });
 * answer.ok; // true
 * ```
 */
export async function verifyAuditChain(
  records: Iterable<StoredAuditRecord> | AsyncIterable<StoredAuditRecord>,
  expected: AuditChainExpectation,
): Promise<AuditVerification> {
  const walk = verifiedAuditRecords(records, expected);
  for (;;) {
    const step = await walk.next();
    if (step.done) return step.value;
  }
}

/**
 * A line of `exportAuditLog` (its JSON text, or parsed) as the record
 * `verifyAuditChain` takes: its entry (every field but `type`, `tenantId`,
 * `seq`, `at`, `prevHash` and `hash`) as the canonical JSON body, `at` as a
 * `Date`. `null` for a checkpoint line; a `TypeError` for anything else, for
 * an `at` not written as hashed (`toISOString`'s form: ISO 8601 UTC with ms)
 * and for text naming a member twice in one object (a `SyntaxError` for text
 * that is not JSON). A line already parsed is taken as it is: the parser
 * kept one of two such members.
 *
 * @example
 * ```ts
 * import { storedAuditRecord } from "./chain.ts";
 * storedAuditRecord('{"type":"checkpoint"}'); // null
 * ```
 */
export function storedAuditRecord(line: string | AuditExportLine): StoredAuditRecord | null {
  return exportLine(line).record ?? null;
}

/** The fields every record line holds around its entry (`recordOf`). */
const RECORD_FIELDS = 6;

/**
 * An export line (its JSON text, or parsed): its record, or a checkpoint
 * line's members; a `TypeError` for anything else and for text naming a
 * member twice in one object (see `storedAuditRecord`).
 */
function exportLine(
  line: string | AuditExportLine,
): { record: StoredAuditRecord; checkpoint?: undefined } | {
  record?: undefined;
  checkpoint: Record<string, unknown>;
} {
  const parsed: unknown = typeof line === "string" ? JSON.parse(line) : line;
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new TypeError("not a record or checkpoint line of an audit export");
  }
  const fields = parsed as Record<string, unknown>;
  const record = fields.type === "checkpoint" ? undefined : recordOf(fields);
  // The canonical text of the same value (a record's: its body and the fields around it).
  const names = () =>
    record === undefined
      ? memberNames(canonicalJson(fields))
      : memberNames(record.body) + RECORD_FIELDS;
  if (typeof line === "string" && memberNames(line) !== names()) {
    throw new TypeError("an audit export line names a member twice in one object");
  }
  return record === undefined ? { checkpoint: fields } : { record };
}

/** A record line's members as the record `verifyAuditChain` takes (see `storedAuditRecord`). */
function recordOf(fields: Record<string, unknown>): StoredAuditRecord {
  const { type, tenantId, seq, at, prevHash, hash, ...entry } = fields;
  const when = new Date(typeof at === "string" ? at : Number.NaN);
  if (
    type !== "record" || typeof tenantId !== "string" || !Number.isSafeInteger(seq) ||
    Number.isNaN(when.getTime()) || when.toISOString() !== at || typeof prevHash !== "string" ||
    typeof hash !== "string"
  ) {
    throw new TypeError("not a record or checkpoint line of an audit export");
  }
  return { tenantId, seq: seq as number, at: when, body: canonicalJson(entry), prevHash, hash };
}

/** What `verifyAuditExport` checks an export file against. */
export interface AuditExportExpectation {
  /** The tenant every line must belong to. */
  tenantId: string;
  /** The `checkpointKey` of the deployment that wrote the export (it checks the MACs; 32 bytes or more). */
  checkpointKey: string;
  /**
   * The `seq` the export starts at, as asked of `exportAuditLog` (or the
   * anchor's after a prune): its first record's `prevHash` is taken as the
   * line holds it. Without it, the export must start at record 1 (after 64 zeros).
   */
  fromSeq?: number;
}

/**
 * Verifies a whole `exportAuditLog` file (its lines as text or parsed, in
 * order; a stream: only the hashes of records past the last checkpoint line
 * are held): the records as `verifyAuditChain` does, from record 1 or
 * `fromSeq`; each checkpoint line signed with `checkpointKey` for
 * `tenantId` (else `checkpoint_invalid`), naming a record read since the
 * checkpoint line before it with that record's hash (else `edited`, or
 * `deleted` for one not read yet); and the last line a checkpoint of the last
 * record (else `truncated`). An export cut right after one of its checkpoint
 * lines still verifies up to it: compare its head with a checkpoint kept
 * elsewhere. A line that is neither kind throws as in `storedAuditRecord`.
 *
 * @example
 * ```ts
 * import { verifyAuditExport } from "./chain.ts";
 * const checkpointKey = "an-audit-key-of-at-least-thirty-two-bytes";
 * const answer = await verifyAuditExport([], { tenantId: "t1", checkpointKey });
 * answer.ok; // true
 * ```
 */
export async function verifyAuditExport(
  lines:
    | Iterable<string | AuditExportLine>
    | AsyncIterable<string | AuditExportLine>,
  expected: AuditExportExpectation,
): Promise<AuditVerification> {
  const { tenantId, checkpointKey, fromSeq } = expected;
  if (fromSeq !== undefined && (!Number.isSafeInteger(fromSeq) || fromSeq < 1)) {
    throw new TypeError("verifyAuditExport's fromSeq must be a positive integer");
  }
  await hmacKey(checkpointKey); // a key too short is a TypeError whatever the lines hold
  const read = (async function* () {
    for await (const line of lines) yield exportLine(line);
  })();
  const first = await read.next();
  // Records read since the last checkpoint line: their hashes by seq.
  const unsigned = new Map<number, string>();
  let lastSeq = 0;
  let endsSigned = true;
  let found: Omit<Broken, "checked"> | undefined;
  const records = async function* (): AsyncGenerator<StoredAuditRecord> {
    for (let step = first; !step.done; step = await read.next()) {
      const { record, checkpoint } = step.value;
      if (record !== undefined) {
        unsigned.set(record.seq, record.hash);
        lastSeq = record.seq;
        endsSigned = false;
        yield record;
        continue;
      }
      found = await checkpointLineProblem(checkpoint, expected, unsigned, lastSeq);
      if (found !== undefined) return;
      const seq = checkpoint.seq as number;
      for (const signed of unsigned.keys()) if (signed <= seq) unsigned.delete(signed);
      endsSigned = seq === lastSeq;
    }
  };
  const anchor = fromSeq === undefined
    ? undefined
    : { seq: fromSeq, prevHash: first.done ? "" : first.value.record?.prevHash ?? "" };
  let answer: AuditVerification;
  try {
    answer = await verifyAuditChain(records(), { tenantId, anchor });
  } finally {
    await read.return(undefined); // the lines left unread (a problem found): their source closed
  }
  if (!answer.ok) return answer;
  if (found !== undefined) return { ...found, checked: answer.checked };
  if (!endsSigned) {
    return {
      ok: false,
      problem: "truncated",
      seq: lastSeq + 1,
      detail: `the export does not end with a checkpoint line of its last record ${lastSeq}`,
      checked: answer.checked,
    };
  }
  return answer;
}

/**
 * What is wrong with an export's checkpoint line (see `verifyAuditExport`),
 * given the hashes of the records read since the one before it and the last
 * record's `seq`; `undefined` when nothing is.
 */
async function checkpointLineProblem(
  fields: Record<string, unknown>,
  expected: AuditExportExpectation,
  unsigned: ReadonlyMap<number, string>,
  lastSeq: number,
): Promise<Omit<Broken, "checked"> | undefined> {
  const checkpoint = fields as unknown as AuditCheckpoint;
  const seq = Number(checkpoint.seq) || 0;
  const valid = checkpoint.tenantId === expected.tenantId &&
    await checkpointValid(expected.checkpointKey, checkpoint);
  if (!valid) {
    return {
      ok: false,
      problem: "checkpoint_invalid",
      seq,
      detail: "the checkpoint line is not one signed with this key for this tenant",
    };
  }
  const hash = unsigned.get(seq);
  if (hash === undefined && seq > lastSeq) {
    return {
      ok: false,
      problem: "deleted",
      seq,
      detail: "a checkpoint line signs a record not read",
    };
  }
  if (hash === undefined) {
    return {
      ok: false,
      problem: "checkpoint_invalid",
      seq,
      detail: "the checkpoint line names no record read since the checkpoint line before it",
    };
  }
  if (hash !== checkpoint.hash) {
    return {
      ok: false,
      problem: "edited",
      seq,
      detail: "the record's hash is not its checkpoint line's",
    };
  }
  return undefined;
}

/** Records inserted or deleted together a verification names at their place, at most. */
const MAX_RENUMBERED = 32;

/**
 * The walk of `verifyAuditChain`: yields each record once it verified (its
 * hash, its link to the one before, its place; a record is checked once the
 * next one is read), then returns the answer. A record yielded is not yet
 * known to be linked to by the next one.
 */
export async function* verifiedAuditRecords(
  records: Iterable<StoredAuditRecord> | AsyncIterable<StoredAuditRecord>,
  expected: AuditChainExpectation,
): AsyncGenerator<StoredAuditRecord, AuditVerification> {
  const { tenantId, head = null, checkpoint } = expected;
  let seq = expected.anchor?.seq ?? 1;
  let prev = expected.anchor?.prevHash ?? GENESIS_HASH;
  let checked = 0;
  let checkpointSeen = false;
  const broken = (problem: Broken["problem"], at: number, detail: string): Broken => ({
    ok: false,
    problem,
    seq: at,
    detail,
    checked,
  });
  /** `r`'s hash at `at`; `null` (no hash matches) for a time no writer makes (an invalid `Date`). */
  const hashOf = (r: StoredAuditRecord, at: number) =>
    Number.isNaN(r.at.getTime()) ? null : auditHash(r.prevHash, tenantId, at, r.at, r.body);
  // A head before the anchor: no prune leaves one (it keeps the head's record).
  if (head !== null && head.seq < seq) {
    return broken("edited", head.seq, `the chain's head lies before its anchor ${seq}`);
  }
  // A checkpoint just before the anchor: the anchor still holds its hash.
  if (checkpoint !== undefined && checkpoint.seq === seq - 1 && checkpoint.hash !== prev) {
    return broken("edited", checkpoint.seq, "the record's hash is not the checkpoint's");
  }
  /** The `prevHash` of the records checked last, newest last (the links inserted records copy). */
  const prevLinks: string[] = [];
  let current: StoredAuditRecord | undefined;
  const check = async (
    r: StoredAuditRecord,
    next: StoredAuditRecord | undefined,
  ): Promise<Broken | undefined> => {
    if (r.tenantId !== tenantId) {
      return broken("inserted", r.seq, "the record is of another tenant");
    }
    if (r.seq < seq) return broken("inserted", r.seq, "a record repeats an earlier position");
    if (r.seq > seq) return broken("deleted", seq, `records ${seq} to ${r.seq - 1} are missing`);
    if (head !== null && r.seq > head.seq) return pastHead(r.seq, head.seq, checked);
    if (await hashOf(r, r.seq) !== r.hash) {
      if (
        next !== undefined && next.seq === r.seq + 1 && await hashOf(r, next.seq) === r.hash &&
        await hashOf(next, r.seq) === next.hash
      ) {
        return broken("reordered", r.seq, `records ${r.seq} and ${next.seq} were swapped`);
      }
      // Hashed `j` places earlier, linked as the record checked `j` places back: the `j` records
      // before it were inserted (the rest renumbered), not counted as checked.
      for (let j = 1; j <= prevLinks.length; j++) {
        if (
          r.prevHash === prevLinks[prevLinks.length - j] && await hashOf(r, r.seq - j) === r.hash
        ) {
          checked -= j;
          return broken(
            "inserted",
            r.seq - j,
            `records ${r.seq - j} to ${r.seq - 1} were inserted, the rest renumbered`,
          );
        }
      }
      // Hashed `j` places later: the `j` records at its place were deleted, the rest renumbered.
      for (let j = 1; j <= MAX_RENUMBERED; j++) {
        if (await hashOf(r, r.seq + j) === r.hash) {
          return broken(
            "deleted",
            r.seq,
            `records ${r.seq} to ${r.seq + j - 1} are missing, the rest renumbered`,
          );
        }
      }
      return broken("edited", r.seq, "the record's content does not match its hash");
    }
    if (r.prevHash !== prev) {
      return seq === (expected.anchor?.seq ?? 1)
        ? broken("edited", r.seq, "the record does not follow the chain's anchor")
        : broken("edited", r.seq - 1, "the next record does not link to this record's hash");
    }
    if (head !== null && r.seq === head.seq && r.hash !== head.hash) {
      return broken("edited", r.seq, "the record's hash is not the head's");
    }
    if (checkpoint !== undefined && r.seq === checkpoint.seq) {
      if (r.hash !== checkpoint.hash) {
        return broken("edited", r.seq, "the record's hash is not the checkpoint's");
      }
      checkpointSeen = true;
    }
    prev = r.hash;
    prevLinks.push(r.prevHash);
    if (prevLinks.length > MAX_RENUMBERED) prevLinks.shift();
    seq++;
    checked++;
    return undefined;
  };
  for await (const next of records) {
    if (current !== undefined) {
      const problem = await check(current, next);
      if (problem !== undefined) return problem;
      yield current;
    }
    current = next;
  }
  if (current !== undefined) {
    const problem = await check(current, undefined);
    if (problem !== undefined) return problem;
    yield current;
  }
  if (head !== null && seq <= head.seq) {
    return broken("truncated", seq, `records ${seq} to ${head.seq} (the head) are missing`);
  }
  if (checkpoint !== undefined && !checkpointSeen && seq <= checkpoint.seq) {
    return broken(
      "truncated",
      seq,
      `records ${seq} to ${checkpoint.seq} (the checkpoint) are missing`,
    );
  }
  const verified = {
    ok: true as const,
    checked,
    head: current === undefined ? null : { seq: current.seq, hash: current.hash },
  };
  if (checkpoint === undefined) return verified;
  // Pruned past it (the anchor after the record that follows it): nothing left to check it by.
  const before = checkpoint.seq < (expected.anchor?.seq ?? 1) - 1;
  return { ...verified, checkpoint: before ? "before_prune" : "checked" };
}
