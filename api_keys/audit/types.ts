/**
 * Types of the verifiable audit log: what a record holds, how the storage
 * keeps it, what verification answers and what a checkpoint is.
 *
 * @module
 */

/** What a record says happened to a key. */
export type AuditAction =
  | "key.created"
  | "key.imported"
  | "key.rotated"
  | "key.revoked"
  | "key.renamed"
  | "key.credits_updated"
  | "key.expiring"
  | "key.rotation_completed"
  | "key.exposed"
  | "key.escalation_refused"
  | "key.verifications_refused";

/** Every `AuditAction`, in a fixed order. */
export const AUDIT_ACTIONS: readonly AuditAction[] = Object.freeze([
  "key.created",
  "key.imported",
  "key.rotated",
  "key.revoked",
  "key.renamed",
  "key.credits_updated",
  "key.expiring",
  "key.rotation_completed",
  "key.exposed",
  "key.escalation_refused",
  "key.verifications_refused",
]);

/** A value of a changed field: JSON, dates as ISO 8601 strings. */
export type AuditValue =
  | string
  | number
  | boolean
  | null
  | readonly AuditValue[]
  | { readonly [field: string]: AuditValue };

/** A field's value before and after the change (`null` where it had none). */
export interface AuditChange {
  /** Value before. */
  before: AuditValue;
  /** Value after. */
  after: AuditValue;
}

/** Who did it and from where, passed to the service's changing calls (all optional). */
export interface AuditContext {
  /** Who: the admin routes pass `actorOf(request)`; default `"app"` (`"system"` for the library's jobs). */
  actor?: string;
  /** The request's id, when known. */
  requestId?: string;
  /** The client's address, when known. */
  clientAddress?: string;
}

/**
 * The content of a record the library writes (hashed as canonical JSON):
 * never a raw key, secret, hash or pepper.
 */
export interface AuditEntry {
  /** Format version (1). */
  v: 1;
  /** What happened. */
  action: AuditAction;
  /** Who did it: an actor name, `"app"` or `"system"`. */
  actor: string;
  /** The key's id (`null` for a tenant-wide record). */
  keyId: string | null;
  /** The key's public prefix. */
  prefix: string | null;
  /** The request's id, when known. */
  requestId: string | null;
  /** The client's address, when known. */
  clientAddress: string | null;
  /** `"success"`, or `"refused"` for a refused attempt. */
  outcome: "success" | "refused";
  /** The changed fields, before and after. */
  changes: Readonly<Record<string, AuditChange>>;
}

/** What the service hands the storage to append: the tenant and the canonical JSON of the entry. */
export interface AuditAppend {
  /** The tenant whose chain gets the record. */
  tenantId: string;
  /** The canonical JSON of an `AuditEntry` (stored and hashed as is). */
  body: string;
  /** The service's clock; a storage with a clock of its own (a database) uses that instead. */
  at: Date;
  /** The entry's key id, actor and action (for the filters; the storage may read them from `body`). */
  keyId: string | null;
  /** See `keyId`. */
  actor: string;
  /** See `keyId`. */
  action: AuditAction;
}

/** A record as the storage keeps it. */
export interface StoredAuditRecord {
  /** The tenant. */
  tenantId: string;
  /** Sequence number in the tenant's chain, from 1, without gaps. */
  seq: number;
  /** When it was written (the database clock where there is one), to the millisecond. */
  at: Date;
  /** The canonical JSON of its `AuditEntry`. */
  body: string;
  /** The previous record's hash (64 zeros for the first). */
  prevHash: string;
  /** sha256 of prevHash, tenant, seq, time and body (see `auditHash`), lowercase hex. */
  hash: string;
}

/** The chain's head and anchor as the storage keeps them. */
export interface AuditChainState {
  /** The last record's sequence number and hash (`null` for an empty chain). */
  head: { seq: number; hash: string } | null;
  /** The first kept record's sequence number and previous hash (1 and 64 zeros until pruned). */
  anchor: { seq: number; prevHash: string };
}

/** What `readAudit` reads: records of one tenant, in `seq` order, filtered. */
export interface AuditReadQuery {
  /** The tenant. */
  tenantId: string;
  /** `"asc"` (oldest first) or `"desc"` (newest first). */
  order: "asc" | "desc";
  /** Only records with `seq` greater than this. */
  afterSeq?: number;
  /** Only records with `seq` less than this. */
  beforeSeq?: number;
  /** Only records written at or after this time. */
  from?: Date;
  /** Only records written before this time. */
  to?: Date;
  /** Only records of this key. */
  keyId?: string;
  /** Only records of this actor. */
  actor?: string;
  /** Only records of this action. */
  action?: AuditAction;
  /** Most records answered (1 to 1,000). */
  limit: number;
}

/** A record as the service answers it: its entry, where it sits in the chain, and when. */
export interface AuditRecord extends AuditEntry {
  /** The tenant. */
  tenantId: string;
  /** Sequence number in the tenant's chain. */
  seq: number;
  /** When it was written, ISO 8601 UTC with milliseconds. */
  at: string;
  /** The previous record's hash. */
  prevHash: string;
  /** This record's hash. */
  hash: string;
}

/**
 * A signed chain head: HMAC-SHA-256 with the app's checkpoint key over the
 * tenant, `seq` and `hash` (see `signCheckpoint`). Kept outside the database,
 * it proves the chain up to `seq` existed with that head.
 */
export interface AuditCheckpoint {
  /** The tenant. */
  tenantId: string;
  /** Sequence number of the head signed. */
  seq: number;
  /** Hash of the head signed. */
  hash: string;
  /** When it was signed, ISO 8601 UTC. */
  at: string;
  /** HMAC-SHA-256 of `tenantId`, `seq`, `hash` and `at`, lowercase hex. */
  mac: string;
}

/** How a chain was found broken. */
export type AuditProblem =
  | "edited"
  | "deleted"
  | "inserted"
  | "reordered"
  | "truncated"
  | "checkpoint_invalid";

/** The answer of `verifyAuditLog`. */
export type AuditVerification =
  | {
    /** The chain verifies. */
    ok: true;
    /** Records checked. */
    checked: number;
    /** The last record checked (`null` when none). */
    head: { seq: number; hash: string } | null;
    /**
     * With a checkpoint: `"checked"` (its record, or the anchor's `prevHash`,
     * has its hash), or `"before_prune"`: a prune passed it, so it proved
     * nothing; treat the records it covered as unverified.
     */
    checkpoint?: "checked" | "before_prune";
  }
  | {
    /** The chain does not verify. */
    ok: false;
    /** What was found. */
    problem: AuditProblem;
    /** The first record concerned (for `deleted` and `truncated`, the first missing one). */
    seq: number;
    /** One sentence saying what did not match. */
    detail: string;
    /** Records checked before it. */
    checked: number;
  };

/** Options of the audit log (`ApiKeysServiceOptions.audit`). */
export interface ApiKeyAuditOptions {
  /** Key of the checkpoints' HMAC-SHA-256, at least 32 bytes; keep it outside the database. */
  checkpointKey: string;
  /** A checkpoint after this many records of a tenant written by this instance (1 to 1,000,000; default 1,000). */
  checkpointEvery?: number;
  /** …or when the tenant's last one is this old, in ms (1,000 to 86,400,000; default 900,000). */
  checkpointIntervalMs?: number;
  /**
   * Opt-in (default `false`; needs the service's `usage` option): one
   * `key.verifications_refused` record per key and UTC hour with refusals,
   * their counts by code, taken from the usage recorder when it writes an
   * hour past (never one per request; the verify path is the same either way).
   */
  refusedVerifications?: boolean;
}

/** What `ApiKeysService.auditLog` reads: newest first, filtered, a page at a time. */
export interface AuditLogQuery {
  /** Records written at or after this time. */
  from?: Date;
  /** Records written before this time. */
  to?: Date;
  /** Records of this key only. */
  keyId?: string;
  /** Records of this actor only. */
  actor?: string;
  /** Records of this action only. */
  action?: AuditAction;
  /** The previous page's `nextCursor`. */
  cursor?: string | null;
  /** Records per page, 1 to 100 (default 25). */
  limit?: number;
}

/** A page of `ApiKeysService.auditLog`. */
export interface AuditLogPage {
  /** The records, newest first. */
  records: AuditRecord[];
  /** The cursor of the next (older) page, `null` at the end. */
  nextCursor: string | null;
}

/** What `ApiKeysService.verifyAuditLog` checks (default: the whole chain). */
export interface AuditVerifyRange {
  /**
   * The first record checked (its `prevHash` is trusted); default, and at or
   * before the anchor (pruned records are not missing), the chain's anchor.
   * With a `checkpoint` before it, the check starts at the checkpoint's record.
   */
  fromSeq?: number;
  /**
   * The last record checked; default the head (a missing tail then is
   * `truncated`). Before the head, the records up to it must be there (the
   * head proves they were written) and record `toSeq + 1` must link to its
   * hash (read, not answered); at or past it, up to the head, its hash
   * checked. Before a `checkpoint`'s `seq`: a `TypeError`.
   */
  toSeq?: number;
  /**
   * A checkpoint kept elsewhere: checked with the key (its `seq` a safe
   * integer of at least 1, its `hash` 64 lowercase hex digits, else
   * `checkpoint_invalid`), then the chain must reach it with its hash. One a
   * prune passed is answered `checkpoint: "before_prune"` (not checked).
   */
  checkpoint?: AuditCheckpoint;
}

/** One line of the JSON Lines export. */
export type AuditExportLine =
  | ({ type: "record" } & AuditRecord)
  | ({ type: "checkpoint" } & AuditCheckpoint);
