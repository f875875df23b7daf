/**
 * The best entries of a stream kept in bounded memory (search_files' `sortBy`, SPEC §22): a binary heap
 * with the worst kept entry on top, so each new entry costs O(log n) and the kept set never grows
 * past its bound, however long the stream.
 */

/** A kept entry: its rendered line and its size in characters of the result. */
export interface Ranked {
  readonly line: string;
}

/** A heap of at most the entries its owner lets it keep, worst on top; `worse(a, b)`: a ranks after b. */
export class TopN<T extends Ranked> {
  private readonly heap: T[] = [];
  /** Characters of the kept lines, each with its line break. */
  keptChars = 0;

  constructor(private readonly worse: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.heap.length;
  }

  /** The worst kept entry. */
  get worst(): T | undefined {
    return this.heap[0];
  }

  /** Adds `item`. */
  push(item: T): void {
    const h = this.heap;
    h.push(item);
    this.keptChars += item.line.length + 1;
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.worse(h[i]!, h[parent]!)) break;
      [h[i], h[parent]] = [h[parent]!, h[i]!];
      i = parent;
    }
  }

  /** Removes the worst entry. */
  pop(): T | undefined {
    const h = this.heap;
    const top = h[0];
    if (top === undefined) return undefined;
    const last = h.pop()!;
    this.keptChars -= top.line.length + 1;
    if (h.length === 0) return top;
    h[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let w = i;
      if (l < h.length && this.worse(h[l]!, h[w]!)) w = l;
      if (r < h.length && this.worse(h[r]!, h[w]!)) w = r;
      if (w === i) break;
      [h[i], h[w]] = [h[w]!, h[i]!];
      i = w;
    }
    return top;
  }

  /** The kept entries, best first (empties the heap). */
  drainBestFirst(): T[] {
    const out: T[] = [];
    for (let item = this.pop(); item !== undefined; item = this.pop()) out.push(item);
    return out.reverse();
  }
}
