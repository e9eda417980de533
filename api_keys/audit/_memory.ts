/**
 * The audit chains of `InMemoryApiKeyStorage`: per tenant, appends run one
 * at a time; each record's hash is computed first, then the change runs and
 * the record is appended in the same synchronous step, only when the change
 * happened (a throw or `false` appends nothing).
 *
 * @module
 */
import { auditHash, GENESIS_HASH } from "./chain.ts";
import type { AuditAppend, AuditChainState, AuditReadQuery, StoredAuditRecord } from "./types.ts";

interface Chain {
  records: StoredAuditRecord[];
  anchor: { seq: number; prevHash: string };
  /** The end of the last append of this tenant (appends wait for it). */
  tail: Promise<unknown>;
}

const copy = (r: StoredAuditRecord): StoredAuditRecord => ({ ...r, at: new Date(r.at.getTime()) });

/** Every tenant's chain, in memory. */
export class MemoryAuditChains {
  readonly #chains = new Map<string, Chain>();

  #chain(tenantId: string): Chain {
    let chain = this.#chains.get(tenantId);
    if (chain === undefined) {
      chain = { records: [], anchor: { seq: 1, prevHash: GENESIS_HASH }, tail: Promise.resolve() };
      this.#chains.set(tenantId, chain);
    }
    return chain;
  }

  /**
   * Runs `change` and appends `audit` with it when it answers anything but
   * `false`; resolves the change's answer and the record (`null` when none).
   */
  run<T>(audit: AuditAppend, change: () => T): Promise<[T, StoredAuditRecord | null]> {
    const chain = this.#chain(audit.tenantId);
    const step = chain.tail.then(async () => {
      const last = chain.records.at(-1);
      const seq = last === undefined ? chain.anchor.seq : last.seq + 1;
      const prevHash = last?.hash ?? chain.anchor.prevHash;
      const at = new Date(audit.at.getTime());
      const hash = await auditHash(prevHash, audit.tenantId, seq, at, audit.body);
      const answer = change();
      if (answer === false) return [answer, null] as [T, null];
      const record = { tenantId: audit.tenantId, seq, at, body: audit.body, prevHash, hash };
      chain.records.push(record);
      return [answer, copy(record)] as [T, StoredAuditRecord];
    });
    chain.tail = step.catch(() => {});
    return step;
  }

  /** The records `query` asks for. */
  read(query: AuditReadQuery): StoredAuditRecord[] {
    const records = this.#chains.get(query.tenantId)?.records ?? [];
    const { afterSeq = -Infinity, beforeSeq = Infinity, from, to, keyId, actor, action } = query;
    const out: StoredAuditRecord[] = [];
    const ordered = query.order === "asc" ? records : [...records].reverse();
    for (const r of ordered) {
      if (out.length >= query.limit) break;
      if (r.seq <= afterSeq || r.seq >= beforeSeq) continue;
      if (from !== undefined && r.at < from) continue;
      if (to !== undefined && r.at >= to) continue;
      if (keyId !== undefined || actor !== undefined || action !== undefined) {
        const body = JSON.parse(r.body) as Record<string, unknown>;
        if (keyId !== undefined && body.keyId !== keyId) continue;
        if (actor !== undefined && body.actor !== actor) continue;
        if (action !== undefined && body.action !== action) continue;
      }
      out.push(copy(r));
    }
    return out;
  }

  /** The tenant's head and anchor. */
  state(tenantId: string): AuditChainState {
    const chain = this.#chains.get(tenantId);
    const last = chain?.records.at(-1);
    return {
      head: last === undefined ? null : { seq: last.seq, hash: last.hash },
      anchor: { ...(chain?.anchor ?? { seq: 1, prevHash: GENESIS_HASH }) },
    };
  }

  /** Drops the tenant's records written before `before`, keeping the last; answers how many. */
  prune(tenantId: string, before: Date): number {
    const chain = this.#chains.get(tenantId);
    if (chain === undefined) return 0;
    let drop = 0;
    while (drop < chain.records.length - 1 && chain.records[drop].at < before) drop++;
    if (drop === 0) return 0;
    chain.records.splice(0, drop);
    chain.anchor = { seq: chain.records[0].seq, prevHash: chain.records[0].prevHash };
    return drop;
  }
}
