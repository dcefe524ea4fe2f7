import { describe, expect, it } from 'vitest';
import type { Job } from '../../src/records/job.js';
import { JobIndex } from '../../src/store/embedded/indexes.js';

const at = 1_795_030_536_758;
const job = (client: string, n: number): Job => ({ kind: 'step', key: `5000000${String(n).padStart(5, '0')}`, client_id: client, due_at: at + n });

describe('the due-job queues of the embedded store (JobIndex)', () => {
  it("drops a queue's dead entries at once when its last job goes (a reset), not one pop at a time later; other queues keep theirs", () => {
    const index = new JobIndex();
    const a = Array.from({ length: 10_000 }, (_, n) => job('a', n));
    const b = Array.from({ length: 3 }, (_, n) => job('b', n));
    for (const j of [...a, ...b]) index.add(`step:${j.key}:${j.client_id}`, j);
    const queueOf = (client: string) => [...index.ofClient(client)][0]!;
    // The newest first, as a reset removes them: the top stays live until the last one goes.
    for (const j of a.slice(1).reverse()) index.remove(j);
    expect(queueOf('a').heap.size).toBe(10_000);
    index.remove(a[0]!);
    expect(queueOf('a').heap.size).toBe(0);
    expect(queueOf('b').heap.size).toBe(3);
    expect(index.counts.get('a')).toBe(0);
    // A job of that queue added again is queued as before.
    index.add('step:x:a', job('a', 7));
    expect([queueOf('a').heap.size, queueOf('a').heap.topAt()]).toEqual([1, at + 7]);
  });

  it('keeps the queue of a job rescheduled in place (removed and added in one change)', () => {
    const index = new JobIndex();
    const j = job('a', 1);
    index.add('id', j);
    index.remove(j);
    index.add('id', { ...j, due_at: at + 99 });
    const queue = [...index.ofClient('a')][0]!;
    expect([queue.heap.size, queue.heap.topAt()]).toEqual([1, at + 99]);
  });
});
