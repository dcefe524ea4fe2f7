import type { Position } from '../cursor.js';

/** Entries per chunk: a full last chunk is followed by a new one; any other is split in two past this. */
const CHUNK_SIZE = 2_048;

/** A run of consecutive entries: ranks and ids side by side. */
interface Chunk {
  ranks: number[];
  ids: string[];
}

/** Whether the entry at `i` of `chunk` comes after `position`. */
const after = (chunk: Chunk, i: number, position: Position): boolean => {
  const rank = chunk.ranks[i]!;
  return position.rank < rank || (position.rank === rank && position.id < chunk.ids[i]!);
};

/** The index of the first entry of `chunk` after `position` (binary search, the end checked first). */
function indexAfter(chunk: Chunk, position: Position): number {
  let lo = 0;
  let hi = chunk.ids.length;
  if (hi > 0 && !after(chunk, hi - 1, position)) return hi;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (after(chunk, mid, position)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/**
 * One client's records in listing order, oldest first, so that the usual insert (the
 * newest) lands at the end. Listings read it backwards from a cursor: their cost depends
 * on this client's records and the page, never on other clients'.
 *
 * Kept as chunks of at most 2,048 entries, each two arrays side by side, the ranks
 * (numbers, which V8 stores unboxed in an array of numbers) and the ids (the strings the
 * records already hold). Not one `{ rank, id }` object per entry: that object and its
 * boxed rank (a creation time does not fit a small integer) would be two heap objects per
 * entry, three entries per created order, for every major GC to mark. Not one array of
 * every entry: growing it copies the whole array in one go (a stall that grows with the
 * orders), and retention's removals from its front would move every entry after them,
 * each time.
 */
export class SortedKeys {
  private readonly chunks: Chunk[] = [];
  private count = 0;
  private readonly chunkSize: number;

  constructor(chunkSize = CHUNK_SIZE) {
    this.chunkSize = Math.max(2, chunkSize);
  }

  get size(): number {
    return this.count;
  }

  add(position: Position): void {
    if (this.chunks.length === 0) this.chunks.push({ ranks: [], ids: [] });
    const c = this.chunkOf(position);
    const chunk = this.chunks[c]!;
    const at = indexAfter(chunk, position);
    if (at === this.chunkSize && c === this.chunks.length - 1) {
      // The usual insert, the newest, past a full last chunk: a new chunk, so appends fill chunks.
      this.chunks.push({ ranks: [position.rank], ids: [position.id] });
      this.count += 1;
      return;
    }
    chunk.ranks.splice(at, 0, position.rank);
    chunk.ids.splice(at, 0, position.id);
    this.count += 1;
    if (chunk.ids.length > this.chunkSize) {
      const half = chunk.ids.length >> 1;
      this.chunks.splice(c + 1, 0, { ranks: chunk.ranks.splice(half), ids: chunk.ids.splice(half) });
    }
  }

  remove(position: Position): void {
    if (this.chunks.length === 0) return;
    const c = this.chunkOf(position);
    const chunk = this.chunks[c]!;
    const at = indexAfter(chunk, position) - 1;
    if (at < 0 || chunk.ids[at] !== position.id || chunk.ranks[at] !== position.rank) return;
    chunk.ranks.splice(at, 1);
    chunk.ids.splice(at, 1);
    this.count -= 1;
    if (chunk.ids.length === 0) this.chunks.splice(c, 1);
  }

  /**
   * Visits entries newest first, starting after `from` (exclusive) when given, until
   * `visit` returns false: then the position of the entry it stopped at, from which a
   * later scan goes on (entries added or removed in between are seen as they are then);
   * undefined once every entry was visited. No object per entry, as a generator would make.
   */
  scanNewestFirst(from: Position | undefined, visit: (id: string, rank: number) => boolean): Position | undefined {
    let [c, start] = this.seek(from);
    for (; c >= 0; c--) {
      const { ids, ranks } = this.chunks[c]!;
      for (let i = Math.min(start, ids.length - 1); i >= 0; i--) {
        if (!visit(ids[i]!, ranks[i]!)) return { rank: ranks[i]!, id: ids[i]! };
      }
      start = Infinity;
    }
    return undefined;
  }

  /** Ids oldest first. */
  *oldestFirst(): Generator<string> {
    for (const chunk of this.chunks) yield* chunk.ids;
  }

  /** Where a newest-first read after `from` (exclusive) starts: a chunk and an index in it (past its end: its last entry). */
  private seek(from: Position | undefined): [chunk: number, start: number] {
    if (!from || this.chunks.length === 0) return [this.chunks.length - 1, Infinity];
    const c = this.chunkOf(from);
    const chunk = this.chunks[c]!;
    let start = indexAfter(chunk, from) - 1;
    if (chunk.ids[start] === from.id && chunk.ranks[start] === from.rank) start -= 1;
    return [c, start];
  }

  /** The chunk `position` belongs in: the last whose first entry is not after it (the first chunk if every one is). */
  private chunkOf(position: Position): number {
    let lo = 0;
    let hi = this.chunks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (after(this.chunks[mid]!, 0, position)) hi = mid - 1;
      else lo = mid;
    }
    return lo;
  }
}
