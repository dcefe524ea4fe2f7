import { describe, expect, it } from 'vitest';
import type { Job, Stored } from '../../src/records/index.js';
import { DEAD_ENTRIES_KEPT, JobIndex } from '../../src/store/embedded/indexes.js';

const at = 1_795_030_536_758;
const job = (client: string, n: number, due = at + n): Stored<Job> => ({ kind: 'step', key: `5000000${String(n).padStart(5, '0')}`, client_id: client, due_at: due, version: 1 });
const idOf = (j: Job) => `step:${j.key}:${j.client_id}`;

/** A JobIndex over a map of job records, as the store keeps them: a test removes a record, then tells the index. */
function indexed(jobs: Stored<Job>[]) {
  const records = new Map(jobs.map((j) => [idOf(j), j]));
  const index = new JobIndex((id) => records.get(id));
  for (const j of jobs) index.add(idOf(j), j);
  const remove = (j: Job) => {
    records.delete(idOf(j));
    index.remove(j);
  };
  const queueOf = (client: string) => [...index.ofClient(client)][0]!;
  /** The queue's entries in the order a claim takes them, dropping the dead ones on the way (as the store's look does). */
  const drain = (client: string) => {
    const { heap } = queueOf(client);
    const live: string[] = [];
    for (let id = heap.topId(); id !== undefined; id = heap.topId()) {
      if (index.isLive(records.get(id), id, heap.topAt())) live.push(id);
      heap.pop();
    }
    return live;
  };
  return { index, remove, queueOf, drain };
}

describe('the due-job queues of the embedded store (JobIndex)', () => {
  it("drops a queue's dead entries at once when its last job goes (a reset), not one pop at a time later; other queues keep theirs", () => {
    const a = Array.from({ length: 10_000 }, (_, n) => job('a', n));
    const b = Array.from({ length: 3 }, (_, n) => job('b', n));
    const { index, remove, queueOf } = indexed([...a, ...b]);
    // The newest first, as a reset removes them: the top stays live until the last one goes.
    for (const j of a.slice(1).reverse()) remove(j);
    expect(queueOf('a').heap.size).toBeLessThanOrEqual(2 + DEAD_ENTRIES_KEPT);
    remove(a[0]!);
    expect(queueOf('a').heap.size).toBe(0);
    expect(queueOf('b').heap.size).toBe(3);
    expect(index.counts.get('a')).toBe(0);
    // A job of that queue added again is queued as before.
    index.add('step:x:a', job('a', 7));
    expect([queueOf('a').heap.size, queueOf('a').heap.topAt()]).toEqual([1, at + 7]);
  });

  it('compacts a queue whose dead entries outnumber its live jobs as they go, keeping every live one in due order', () => {
    // The shape of a reset of orders in flight: the oldest orders' next steps are due last,
    // and the reset removes the newest first, 500 at a time; the oldest 500 stay.
    const total = 20_000;
    const jobs = Array.from({ length: total }, (_, n) => job('a', n, n < 500 ? at + total + n : at + n));
    const { remove, queueOf, drain } = indexed(jobs);
    let worst = 0;
    for (let n = total - 1; n >= 500; n--) {
      remove(jobs[n]!);
      const live = n;
      worst = Math.max(worst, queueOf('a').heap.size - live);
    }
    // Without compaction the 19,500 dead entries would all wait above the live ones.
    expect(worst).toBeLessThanOrEqual(Math.ceil(total / 2) + DEAD_ENTRIES_KEPT);
    expect(queueOf('a').heap.size).toBeLessThanOrEqual(2 * 500 + DEAD_ENTRIES_KEPT);
    expect(drain('a')).toEqual(jobs.slice(0, 500).map(idOf));
  });

  it('keeps one entry per job when it compacts, however often a job was written again at its due time', () => {
    const total = 12_000;
    const jobs = Array.from({ length: total }, (_, n) => job('a', n));
    const { index, remove, queueOf, drain } = indexed(jobs);
    // Written again twice at an unchanged due time: each write queues it again.
    for (let round = 0; round < 2; round++)
      for (const j of jobs) {
        index.remove(j);
        index.add(idOf(j), j);
      }
    let worst = 0;
    for (let n = total - 1; n >= 100; n--) {
      remove(jobs[n]!);
      worst = Math.max(worst, queueOf('a').heap.size - (2 * n + DEAD_ENTRIES_KEPT));
    }
    // Compacted to one entry per job, the queue stays within its bound (else every remove compacts again).
    expect(worst).toBeLessThanOrEqual(0);
    expect(drain('a')).toEqual(jobs.slice(0, 100).map(idOf));
  });

  it('keeps the queue of a job rescheduled in place (removed and added in one change)', () => {
    const j = job('a', 1);
    const { index, queueOf } = indexed([j]);
    index.remove(j);
    index.add(idOf(j), { ...j, due_at: at + 99 });
    expect([queueOf('a').heap.size, queueOf('a').heap.topAt()]).toEqual([1, at + 99]);
  });
});
