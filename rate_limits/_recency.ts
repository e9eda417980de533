/**
 * A map kept in order of use, for the in-memory store's counters: a `Map`
 * finds a node, a doubly linked list through the nodes keeps the order (the
 * oldest is dropped first). A use moves the node in the list, never in the
 * `Map`: deleting and re-inserting a `Map` entry leaves a deleted slot that
 * V8 walks past, so that cost would grow with the number of counters (the
 * verification cache, api_keys/verify/_cache.ts, keeps its order the same way).
 *
 * @module
 */

/** A node of the list: its key and its neighbours (set by `Recency`). */
export interface RecencyNode {
  /** The node's key in the map. */
  readonly key: string;
  /** The next node towards the oldest end. */
  older: RecencyNode | undefined;
  /** The next node towards the newest end. */
  newer: RecencyNode | undefined;
}

/**
 * Nodes by key, in order of use; every operation is O(1).
 *
 * @example
 * ```ts
 * import { Recency } from "./_recency.ts";
 * const recency = new Recency();
 * recency.add({ key: "a", older: undefined, newer: undefined });
 * recency.add({ key: "b", older: undefined, newer: undefined });
 * recency.use("a");
 * recency.oldest?.key; // "b"
 * ```
 */
export class Recency<N extends RecencyNode = RecencyNode> {
  readonly #nodes = new Map<string, N>();
  #oldest: N | undefined;
  #newest: N | undefined;

  /** Nodes held. */
  get size(): number {
    return this.#nodes.size;
  }

  /** The least recently used node. */
  get oldest(): N | undefined {
    return this.#oldest;
  }

  /** The node of `key`, its place unchanged. */
  peek(key: string): N | undefined {
    return this.#nodes.get(key);
  }

  /** The node of `key`, moved to the newest end. */
  use(key: string): N | undefined {
    const node = this.#nodes.get(key);
    if (node !== undefined && node !== this.#newest) {
      this.#unlink(node);
      this.#append(node);
    }
    return node;
  }

  /** Adds `node` (whose key is not held) at the newest end. */
  add(node: N): void {
    this.#nodes.set(node.key, node);
    this.#append(node);
  }

  /** Drops `node`. */
  remove(node: N): void {
    this.#unlink(node);
    this.#nodes.delete(node.key);
  }

  #unlink(node: N): void {
    if (node.older === undefined) this.#oldest = node.newer as N | undefined;
    else node.older.newer = node.newer;
    if (node.newer === undefined) this.#newest = node.older as N | undefined;
    else node.newer.older = node.older;
    node.older = node.newer = undefined;
  }

  #append(node: N): void {
    node.older = this.#newest;
    if (this.#newest === undefined) this.#oldest = node;
    else this.#newest.newer = node;
    this.#newest = node;
  }
}
