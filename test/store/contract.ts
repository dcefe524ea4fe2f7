import { describe, expect, it } from 'vitest';
import { Conflict, RuleViolation, Unavailable } from '../../src/shared/errors.js';
import type { Order } from '../../src/records/order.js';
import { MARKS_KEPT, RUN_MARK_PREFIXES, RUN_MARKS, type ClaimOptions, type Unversioned } from '../../src/records/index.js';
import type { Storage } from '../../src/store/port.js';

/** Every kind of the run's marks: its keys, and its receivers' marks (the default endpoint's and another's). */
const RUN_MARK_KEYS = [...RUN_MARKS, ...RUN_MARK_PREFIXES.flatMap((prefix) => [`${prefix}default`, `${prefix}ep_2`])];

/** An order record as the sandbox stores it. */
export function orderRecord(orderNo: string, clientId: string, createdAt: number, extra: Partial<Order> = {}): Unversioned<Order> {
  return {
    order_no: orderNo,
    batch_id: `7${orderNo}`,
    client_id: clientId,
    courier_code: 'jne',
    scenario: 'delivered',
    status: 'created',
    sender: { sender_name: 'S', sender_addr_id: '317101', sender_address: 'A', sender_phone: '1', pickup_via: 'pickup', order_type: 'regular', input_type: 1 },
    item: { order_code: `code-${orderNo}`, receiver_name: 'R', receiver_phone: '2', receiver_address: 'B', receiver_addr_id: '327301', service_code: 'REG', item_value: '1', item_weight: '1', item_qty: '1', item_name: 'x' },
    awb: null,
    awb_due_at: createdAt + 1000,
    awb_generated_at: null,
    awb_error: null,
    journey_start: null,
    next_step: null,
    history: [],
    created_at: createdAt,
    updated_at: createdAt,
    cancelled_at: null,
    ...extra,
  };
}

/** Makes the writes of the storage opened last fail (a full disk, say) and work again. */
export interface WriteFaults {
  fail(): void;
  heal(): void;
}

/**
 * The contract of the storage port: every adapter calls this at the top of its own
 * test file with a factory that opens a fresh, empty storage (`reopen` opens the same
 * one again after `close`, for adapters that keep data; `faults` injects write
 * failures, for adapters that can).
 */
/**
 * `otherRecords`: how many orders and deliveries another client has in the listing-cost
 * test (default 50,000; a database adapter, whose inserts are round trips, may pass fewer).
 */
export function storageContract(name: string, open: () => Promise<Storage>, reopen?: () => Promise<Storage>, faults?: WriteFaults, otherRecords = 50_000): void {
  describe(`storage port contract: ${name}`, () => {
    it('inserts an order and reads it back by number, AWB and batch, as a frozen value with a version', async () => {
      const storage = await open();
      const stored = await storage.orders.insert(orderRecord('51', 'a', 1, { awb: 'JN1' }));
      expect(stored.version).toBe(1);
      expect(await storage.orders.get('51')).toMatchObject({ order_no: '51', version: 1 });
      expect((await storage.orders.byAwb('JN1'))?.order_no).toBe('51');
      expect(await storage.orders.batchExists('751')).toBe(true);
      expect(Object.isFrozen(await storage.orders.get('51'))).toBe(true);
      await storage.close();
    });

    it("reads a client's order by number or AWB for that client only", async () => {
      const storage = await open();
      await storage.orders.insert(orderRecord('51', 'a', 1, { awb: 'JN1' }));
      expect((await storage.orders.get('51', 'a'))?.order_no).toBe('51');
      expect((await storage.orders.byAwb('JN1', 'a'))?.order_no).toBe('51');
      expect(await storage.orders.get('51', 'b')).toBeUndefined();
      expect(await storage.orders.byAwb('JN1', 'b')).toBeUndefined();
      expect(await storage.transaction((tx) => tx.orders.get('51', 'b'))).toBeUndefined();
      expect((await storage.transaction((tx) => tx.orders.get('51', 'a')))?.order_no).toBe('51');
      await storage.close();
    });

    it('knows a batch while one of its orders is kept, and forgets it with its last (retention over weeks keeps no removed batch)', async () => {
      const storage = await open();
      const [first, second] = await storage.transaction(async (tx) => [await tx.orders.insert(orderRecord('61', 'a', 1, { batch_id: '761' })), await tx.orders.insert(orderRecord('62', 'a', 1, { batch_id: '761' }))]);
      await storage.transaction((tx) => tx.orders.remove(first!));
      expect(await storage.orders.batchExists('761')).toBe(true);
      await storage.transaction((tx) => tx.orders.remove(second!));
      expect(await storage.orders.batchExists('761')).toBe(false);
      // An order moved to another batch leaves its first one (when it was its last) for the new one, also as the store opens again.
      const third = await storage.transaction((tx) => tx.orders.insert(orderRecord('63', 'a', 1, { batch_id: '763' })));
      await storage.transaction((tx) => tx.orders.update({ ...third, batch_id: '764' }));
      expect(await storage.orders.batchExists('763')).toBe(false);
      expect(await storage.orders.batchExists('764')).toBe(true);
      await storage.close();
      if (!reopen) return;
      const reopened = await reopen();
      expect(await reopened.orders.batchExists('764')).toBe(true);
      expect(await reopened.orders.batchExists('761')).toBe(false);
      await reopened.close();
    });

    it('answers a second insert of the same number and a write of a stale version with a Conflict', async () => {
      const storage = await open();
      const first = await storage.orders.insert(orderRecord('51', 'a', 1));
      await expect(storage.orders.insert(orderRecord('51', 'a', 1))).rejects.toBeInstanceOf(Conflict);
      const second = await storage.orders.update({ ...first, status: 'awb_generated' });
      expect(second.version).toBe(2);
      await expect(storage.orders.update({ ...first, status: 'cancelled' })).rejects.toBeInstanceOf(Conflict);
      expect((await storage.orders.get('51'))?.status).toBe('awb_generated');
      // The same inside a unit of work (where a store may send the write with the unit's
      // next statement): the unit fails with a Conflict and none of its writes are kept.
      await expect(
        storage.transaction(async (tx) => {
          await tx.orders.update({ ...first, status: 'cancelled' });
          await tx.orders.insert(orderRecord('52', 'a', 2));
        }),
      ).rejects.toBeInstanceOf(Conflict);
      expect((await storage.orders.get('51'))?.status).toBe('awb_generated');
      expect(await storage.orders.get('52')).toBeUndefined();
      // A unit that read the order first changes it, and what it reads after sees the change.
      const third = await storage.transaction(async (tx) => {
        const current = (await tx.orders.get('51'))!;
        await tx.orders.update({ ...current, status: 'delivered', awb: 'JN51' });
        return tx.orders.get('51');
      });
      expect(third).toMatchObject({ status: 'delivered', version: 3 });
      await storage.close();
    });

    it('keeps an updated order in its place in the listing and moves its AWB lookup', async () => {
      const storage = await open();
      for (let i = 1; i <= 3; i += 1) await storage.orders.insert(orderRecord(`5${i}`, 'a', i * 10));
      const middle = (await storage.orders.get('52'))!;
      const withAwb = await storage.orders.update({ ...middle, awb: 'JN7', status: 'awb_generated' });
      await storage.orders.update({ ...withAwb, awb: 'JN8' });
      expect((await storage.orders.list('a', { limit: 10 })).items.map((o) => [o.order_no, o.awb ?? null])).toEqual([['53', null], ['52', 'JN8'], ['51', null]]);
      expect(await storage.orders.byAwb('JN7')).toBeUndefined();
      expect((await storage.orders.byAwb('JN8'))?.order_no).toBe('52');
      expect((await storage.orders.list('a', { limit: 10, status: 'awb_generated' })).total).toBe(1);
      await storage.close();
    });

    it('lists only the client’s own orders, newest first, a page at a time, with filters', async () => {
      const storage = await open();
      for (let i = 1; i <= 5; i += 1) await storage.orders.insert(orderRecord(`5${i}`, 'a', i * 10, { status: i % 2 ? 'created' : 'delivered' }));
      await storage.orders.insert(orderRecord('59', 'b', 100));
      const first = await storage.orders.list('a', { limit: 2 });
      expect(first.items.map((o) => o.order_no)).toEqual(['55', '54']);
      expect(first.total).toBe(5);
      const second = await storage.orders.list('a', { limit: 2, cursor: first.next_cursor! });
      expect(second.items.map((o) => o.order_no)).toEqual(['53', '52']);
      const last = await storage.orders.list('a', { limit: 2, cursor: second.next_cursor! });
      expect(last.items.map((o) => o.order_no)).toEqual(['51']);
      expect(last.next_cursor).toBeNull();
      expect((await storage.orders.list('a', { limit: 10, status: 'delivered' })).items.map((o) => o.order_no)).toEqual(['54', '52']);
      expect((await storage.orders.list('a', { limit: 10, search: 'code-53' })).items.map((o) => o.order_no)).toEqual(['53']);
      expect((await storage.orders.list('c', { limit: 10 })).items).toEqual([]);
      await expect(storage.orders.list('a', { limit: 2, cursor: '%%%' })).rejects.toBeInstanceOf(RuleViolation);
      // A rank that is not a whole number (a tampered cursor) is refused, not passed to the store.
      for (const rank of ['1.5', '1e300', '99999999999999999999']) {
        await expect(storage.orders.list('a', { limit: 2, cursor: Buffer.from(`${rank}:51`).toString('base64url') })).rejects.toBeInstanceOf(RuleViolation);
        await expect(storage.deliveries.list('a', { limit: 2, cursor: Buffer.from(`${rank}:x`).toString('base64url') })).rejects.toBeInstanceOf(RuleViolation);
      }
      await storage.close();
    });

    it(`lists a client’s orders and deliveries at a cost set by its own records, not by another client’s ${otherRecords.toLocaleString('en')}, and one order’s deliveries at a cost set by that order’s`, async () => {
      const storage = await open();
      const delivery = (id: string, clientId: string, seq: number, orderNo: string | null = null, event: 'awb.generated' | 'order.cancelled' = 'awb.generated') => ({
        id, seq, client_id: clientId, event, order_no: orderNo, body: '{}', chaos: [], status: 'paused' as const, created_at: seq, next_attempt_at: null, last_error: null, attempts: [],
      });
      for (let i = 1; i <= 3; i += 1) {
        await storage.orders.insert(orderRecord(`1${i}`, 'small', i));
        await storage.deliveries.insert(delivery(`msg_small_${i}`, 'small', i));
      }
      // One order of the client that gets many deliveries: its AWB webhook sent twice, and its cancellation.
      await storage.deliveries.insert(delivery('msg_order_1', 'big', 1, '77'));
      await storage.deliveries.insert(delivery('msg_order_2', 'big', 2, '77', 'order.cancelled'));
      await storage.deliveries.insert(delivery('msg_order_3', 'big', 3, '77'));
      // The readiness report's question at every tracking read: the AWB webhooks of this order.
      const ofOrder = () => storage.deliveries.list('big', { limit: 20, order_no: '77', event: 'awb.generated' });
      // Each listing a few hundred times: the time of the whole loop, so one slow call on a busy machine does not decide.
      const listings = async (): Promise<number> => {
        const started = performance.now();
        for (let i = 0; i < 300; i += 1) {
          await storage.orders.list('small', { limit: 1 });
          await storage.orders.list('small', { limit: 10, status: 'created' });
          await storage.orders.list('none', { limit: 1 });
          await storage.deliveries.list('small', { limit: 1 });
          await storage.deliveries.list('none', { limit: 1, status: 'paused' });
          await ofOrder();
        }
        return performance.now() - started;
      };
      // Best of three, so that a garbage collection or a busy neighbour does not decide.
      const best = async (): Promise<number> => Math.min(await listings(), await listings(), await listings());
      const alone = await best();
      for (let start = 0; start < otherRecords; start += 5_000) {
        await storage.transaction(async (tx) => {
          for (let i = start; i < Math.min(start + 5_000, otherRecords); i += 1) {
            await tx.orders.insert(orderRecord(String(1_000_000 + i), 'big', 10 + i));
            await tx.deliveries.insert(delivery(`msg_big_${i}`, 'big', 10 + i));
          }
        });
      }
      const beside = await best();
      expect((await storage.orders.list('small', { limit: 10 })).total).toBe(3);
      expect((await storage.orders.list('none', { limit: 10 })).items).toEqual([]);
      const order = await ofOrder();
      expect(order.items.map((d) => d.id)).toEqual(['msg_order_3', 'msg_order_1']);
      expect(order.total).toBe(2);
      expect((await storage.deliveries.list('small', { limit: 20, order_no: '77' })).items).toEqual([]);
      const first = await storage.deliveries.list('big', { limit: 1, order_no: '77', event: 'awb.generated' });
      expect(first.items.map((d) => d.id)).toEqual(['msg_order_3']);
      const next = await storage.deliveries.list('big', { limit: 1, order_no: '77', event: 'awb.generated', cursor: first.next_cursor! });
      expect([next.items.map((d) => d.id), next.next_cursor]).toEqual([['msg_order_1'], null]);
      await storage.deliveries.remove(first.items[0]!);
      expect((await storage.deliveries.list('big', { limit: 20, order_no: '77' })).items.map((d) => d.id)).toEqual(['msg_order_2', 'msg_order_1']);
      // Held deliveries are counted per client, and only as far as asked (the outbox bound).
      expect(await storage.deliveries.countByStatus('small', 'paused')).toBe(3);
      expect(await storage.deliveries.countByStatus('big', 'paused')).toBe(otherRecords + 2);
      expect(await storage.deliveries.countByStatus('big', 'paused', 10)).toBe(10);
      expect(await storage.deliveries.countByStatus('big', 'failed')).toBe(0);
      expect(await storage.deliveries.countByStatus('none', 'paused', 10)).toBe(0);
      // A scan of every client's records would make each listing thousands of times slower; the bound is generous.
      expect(beside).toBeLessThan(Math.max(alone * 5, 100));
      await storage.close();
    }, 120_000);

    it('commits everything a transaction wrote together, or nothing when it throws half way', async () => {
      const storage = await open();
      await expect(
        storage.transaction(async (tx) => {
          await tx.orders.insert(orderRecord('51', 'a', 1));
          await tx.jobs.schedule({ kind: 'awb', key: '51', client_id: 'a', due_at: 5 });
          await tx.counters.next('order');
          throw new Error('half way');
        }),
      ).rejects.toThrow('half way');
      expect(await storage.orders.get('51')).toBeUndefined();
      expect(await storage.jobs.count()).toBe(0);
      // The value the failed unit took is given again (embedded) or skipped, as a sequence skips it (PostgreSQL); never repeated.
      expect([1, 2]).toContain(await storage.counters.next('order'));
      await storage.transaction(async (tx) => {
        await tx.orders.insert(orderRecord('52', 'a', 1));
        expect((await tx.orders.get('52'))?.order_no).toBe('52'); // reads its own writes
        await tx.jobs.schedule({ kind: 'awb', key: '52', client_id: 'a', due_at: 5 });
      });
      expect((await storage.orders.get('52'))?.order_no).toBe('52');
      expect(await storage.jobs.nextDue()).toBe(5);
      await storage.close();
    });

    it('keeps the first value of a meta key set if absent, also when several are set at once, and answers it to each', async () => {
      const storage = await open();
      const kept = await Promise.all(['s1', 's2', 's3', 's4'].map((seed) => storage.meta.setIfAbsent('seed', seed)));
      expect(new Set(kept).size).toBe(1);
      expect(await storage.meta.get('seed')).toBe(kept[0]);
      expect(await storage.meta.setIfAbsent('seed', 'later')).toBe(kept[0]);
    });

    it('never repeats a counter value', async () => {
      const storage = await open();
      const values = await Promise.all(Array.from({ length: 50 }, () => storage.counters.next('order')));
      expect(new Set(values).size).toBe(50);
      expect(Math.max(...values)).toBe(50);
      await storage.close();
    });

    it('ranks in the order ranks are taken, in and out of units of work, never the same rank twice', async () => {
      const storage = await open();
      const outside = await Promise.all(Array.from({ length: 50 }, () => storage.counters.rank('delivery')));
      const inside = await storage.transaction(async (tx) => [await tx.counters.rank('delivery'), await tx.counters.rank('delivery')]);
      const ranks = [...outside, ...inside, await storage.counters.rank('delivery')];
      expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
      expect(new Set(ranks).size).toBe(ranks.length);
      await storage.close();
    });

    it('claims due jobs earliest first, once each; a rescheduled job survives its completion, a completed one is gone', async () => {
      const storage = await open();
      await storage.jobs.schedule({ kind: 'awb', key: 'late', client_id: 'a', due_at: 30 });
      await storage.jobs.schedule({ kind: 'awb', key: 'early', client_id: 'b', due_at: 10 });
      await storage.jobs.schedule({ kind: 'step', key: 'later', client_id: 'a', due_at: 99 });
      const claimed = await storage.jobs.claim({ until: 50, limit: 10, owner: 'w1', leaseMs: 60_000 });
      expect(claimed.map((j) => j.key)).toEqual(['early', 'late']);
      expect(await storage.jobs.claim({ until: 50, limit: 10, owner: 'w2', leaseMs: 60_000 })).toEqual([]);
      await storage.jobs.schedule({ kind: 'awb', key: 'late', client_id: 'a', due_at: 40 }); // moved while claimed
      for (const job of claimed) await storage.jobs.complete(job);
      expect(await storage.jobs.get('awb', 'early')).toBeUndefined();
      expect((await storage.jobs.get('awb', 'late'))?.due_at).toBe(40);
      expect(await storage.jobs.nextDue({ clientId: 'a' })).toBe(40);
      expect(await storage.jobs.count()).toBe(2);
      await storage.close();
    });

    it('claims jobs due at one time in the order they were scheduled (a job moved there comes after them)', async () => {
      const storage = await open();
      await storage.jobs.schedule({ kind: 'awb', key: 'moved', client_id: 'a', due_at: 5 });
      await storage.jobs.schedule({ kind: 'awb', key: 'z', client_id: 'a', due_at: 10 });
      await storage.jobs.schedule({ kind: 'step', key: 's', client_id: 'a', due_at: 10 }); // another kind
      await storage.jobs.schedule({ kind: 'awb', key: 'm', client_id: 'b', due_at: 10 }); // another client
      await storage.jobs.schedule({ kind: 'awb', key: 'a', client_id: 'a', due_at: 10 });
      await storage.jobs.schedule({ kind: 'awb', key: 'moved', client_id: 'a', due_at: 10 });
      await storage.jobs.schedule({ kind: 'awb', key: 'z', client_id: 'a', due_at: 10 }); // again at the same time: keeps its place
      const claimed = await storage.jobs.claim({ until: 10, limit: 10, owner: 'w1', leaseMs: 60_000 });
      expect(claimed.map((j) => j.key)).toEqual(['z', 's', 'm', 'a', 'moved']);
      await storage.close();
    });

    it('claims only the kinds asked for, at most perClient of one client, none of the clients skipped', async () => {
      const storage = await open();
      for (let i = 1; i <= 3; i += 1) {
        await storage.jobs.schedule({ kind: 'webhook', key: `a${i}`, client_id: 'a', due_at: i });
        await storage.jobs.schedule({ kind: 'webhook', key: `b${i}`, client_id: 'b', due_at: 10 + i });
      }
      await storage.jobs.schedule({ kind: 'awb', key: 'o1', client_id: 'a', due_at: 50 });
      const claim = (options: Partial<ClaimOptions>) => storage.jobs.claim({ until: 100, limit: 10, owner: 'w1', leaseMs: 60_000, ...options });
      expect(await storage.jobs.nextDue({ kinds: ['awb', 'step'] })).toBe(50);
      expect(await storage.jobs.nextDue({ clientId: 'b', kinds: ['webhook'] })).toBe(11);
      expect((await claim({ kinds: ['awb'] })).map((j) => j.key)).toEqual(['o1']);
      expect((await claim({ kinds: ['webhook'], perClient: 2, skipClients: new Set(['b']) })).map((j) => j.key)).toEqual(['a1', 'a2']);
      expect((await claim({ kinds: ['webhook'], perClient: 2 })).map((j) => j.key)).toEqual(['a3', 'b1', 'b2']);
      expect(await storage.jobs.nextDue()).toBe(13);
      await storage.close();
    });

    it('claims with a share in rounds: every client’s earliest due job before any client’s second', async () => {
      const storage = await open();
      // Five clients with ten overdue jobs each, and one whose single job has just fallen due.
      for (const [n, client] of ['a', 'b', 'c', 'd', 'e'].entries()) {
        for (let i = 1; i <= 10; i += 1) await storage.jobs.schedule({ kind: 'awb', key: `${client}${i}`, client_id: client, due_at: n * 10 + i });
      }
      await storage.jobs.schedule({ kind: 'awb', key: 'z1', client_id: 'z', due_at: 100 });
      const claim = (limit: number) => storage.jobs.claim({ until: 100, limit, owner: 'w1', leaseMs: 60_000, perClient: 8 });
      expect((await claim(6)).map((j) => j.key)).toEqual(['a1', 'b1', 'c1', 'd1', 'e1', 'z1']);
      expect((await claim(8)).map((j) => j.key)).toEqual(['a2', 'b2', 'c2', 'd2', 'e2', 'a3', 'b3', 'c3']);
      // Past its share, a client waits for the next claim.
      expect((await claim(100)).map((j) => j.key).filter((key) => key.startsWith('e'))).toEqual(['e3', 'e4', 'e5', 'e6', 'e7', 'e8', 'e9', 'e10']);
      await storage.close();
    });

    it('takes a share as a whole number of jobs on every store: 1.5 as 1, NaN as none', async () => {
      const storage = await open();
      for (const client of ['a', 'b']) for (let i = 1; i <= 3; i += 1) await storage.jobs.schedule({ kind: 'awb', key: `${client}${i}`, client_id: client, due_at: i });
      const claim = (perClient: number) => storage.jobs.claim({ until: 100, limit: 10, owner: 'w1', leaseMs: 60_000, perClient });
      expect(await claim(Number.NaN)).toEqual([]);
      expect((await claim(1.5)).map((j) => j.key)).toEqual(['a1', 'b1']);
      await storage.close();
    });

    it('claims one client’s jobs on its own clock, or every client’s with each clock’s lead', async () => {
      const storage = await open();
      await storage.jobs.schedule({ kind: 'awb', key: 'a1', client_id: 'a', due_at: 100 });
      await storage.jobs.schedule({ kind: 'awb', key: 'b1', client_id: 'b', due_at: 50 });
      await storage.jobs.schedule({ kind: 'step', key: 'b2', client_id: 'b', due_at: 400 });
      const claim = (options: Partial<ClaimOptions>) => storage.jobs.claim({ until: 0, limit: 10, owner: 'w1', leaseMs: 60_000, ...options });
      // a's clock runs 90 ahead of the given one, b's 10 behind: a1 is due at 10 there, b1 at 60, b2 at 410.
      const ahead = new Map([['a', 90], ['b', -10]]);
      expect(await storage.jobs.nextDue({ ahead })).toBe(10);
      expect(await storage.jobs.nextDue({ ahead, clientId: 'b' })).toBe(60);
      expect(await storage.jobs.nextDue({ clientId: 'b' })).toBe(50);
      expect((await claim({ until: 100, ahead })).map((j) => j.key)).toEqual(['a1', 'b1']);
      expect(await claim({ until: 399, clientId: 'b' })).toEqual([]);
      expect((await claim({ until: 400, clientId: 'b' })).map((j) => j.key)).toEqual(['b2']);
      await storage.close();
    });

    it('keeps a client’s clock in its settings', async () => {
      const storage = await open();
      await storage.settings.put({ client_id: 'a', webhook: null, generated_secret: null, faults: [], fault_seq: 0, clock: { offset_ms: 5, now_ms: 1_000 } });
      expect((await storage.settings.get('a'))?.clock).toEqual({ offset_ms: 5, now_ms: 1_000 });
      await storage.close();
    });

    it('gives a released job back, due as it was; a cancelled one is never claimed', async () => {
      const storage = await open();
      await storage.jobs.schedule({ kind: 'webhook', key: 'd1', client_id: 'a', due_at: 10 });
      await storage.jobs.schedule({ kind: 'webhook', key: 'd2', client_id: 'a', due_at: 11 });
      await storage.jobs.cancel('webhook', 'd2');
      const [job] = await storage.jobs.claim({ until: 100, limit: 10, owner: 'w1', leaseMs: 60_000 });
      expect(job?.key).toBe('d1');
      await storage.jobs.release(job!);
      expect((await storage.jobs.claim({ until: 100, limit: 10, owner: 'w2', leaseMs: 60_000 })).map((j) => j.key)).toEqual(['d1']);
      await storage.close();
    });

    it('leaves a job claimed again alone when an older claim of it is given back', async () => {
      const storage = await open();
      const claim = (owner: string) => storage.jobs.claim({ until: 100, limit: 10, owner, leaseMs: 60_000 });
      await storage.jobs.schedule({ kind: 'webhook', key: 'd1', client_id: 'a', due_at: 10 });
      const [first] = await claim('w1');
      // Rescheduled while its first claim runs (which lapses), then claimed again by the same worker.
      await storage.jobs.schedule({ kind: 'webhook', key: 'd1', client_id: 'a', due_at: 20 });
      const [second] = await claim('w1');
      expect([first?.due_at, second?.due_at]).toEqual([10, 20]);
      await storage.jobs.release(first!);
      expect(await claim('w2')).toEqual([]);
      await storage.jobs.release(second!);
      expect((await claim('w2')).map((j) => j.due_at)).toEqual([20]);
      await storage.close();
    });

    it('keeps a job cancelled and scheduled again apart from a claim of the one cancelled', async () => {
      const storage = await open();
      const claim = (owner: string) => storage.jobs.claim({ until: 100, limit: 10, owner, leaseMs: 60_000 });
      await storage.jobs.schedule({ kind: 'step', key: 'o1', client_id: 'a', due_at: 10 });
      const [first] = await claim('w1');
      await storage.jobs.cancel('step', 'o1');
      await storage.jobs.schedule({ kind: 'step', key: 'o1', client_id: 'a', due_at: 20 });
      // The old claim ends after the job came back: its completion must not take the new job.
      await storage.jobs.complete(first!);
      expect((await storage.jobs.get('step', 'o1'))?.due_at).toBe(20);
      const [second] = await claim('w1');
      expect(second?.due_at).toBe(20);
      // Nor may its release give back the new job's claim.
      await storage.jobs.release(first!);
      expect(await claim('w2')).toEqual([]);
      await storage.jobs.complete(second!);
      expect(await storage.jobs.get('step', 'o1')).toBeUndefined();
      await storage.close();
    });

    it('keeps each client’s readiness report apart: counts add up, the event log is bounded, a new run or a clear empties it', async () => {
      const storage = await open();
      const event = (n: number) => ({ at: n, item: 'op.create-order', outcome: 'exercised' as const, note: `request ${n}` });
      for (let n = 1; n <= storage.reports.size + 3; n += 1) await storage.reports.change('a', { counts: { 'op.create-order:exercised': 1 }, events: [event(n)] });
      await storage.reports.change('a', { marks: { retry: { at: 5, wall: 6, detail: { op: 'createOrder' } } }, checks: [{ id: 'valid', status: 'passed', expected: '2xx', got: '204', at: 7 }] });
      await storage.reports.change('b', { counts: { 'op.tracking:exercised': 2 } });
      const a = await storage.reports.get('a');
      expect(a.counts).toEqual({ 'op.create-order:exercised': storage.reports.size + 3 });
      expect(a.events).toHaveLength(storage.reports.size);
      expect(a.events.at(-1)?.note).toBe(`request ${storage.reports.size + 3}`);
      expect(a.marks.retry?.detail).toEqual({ op: 'createOrder' });
      expect(a.checks.map((c) => c.status)).toEqual(['passed']);
      expect((await storage.reports.get('b')).counts).toEqual({ 'op.tracking:exercised': 2 });
      await storage.reports.change('a', { marks: { retry: null } });
      expect((await storage.reports.get('a')).marks).toEqual({});
      await storage.reports.start('a', { name: 'ci-42', started_at: 9 });
      expect(await storage.reports.get('a')).toMatchObject({ run: { name: 'ci-42', started_at: 9 }, counts: {}, events: [], checks: [] });
      expect(await storage.reports.clear('b')).toBe(1);
      expect((await storage.reports.get('b')).counts).toEqual({});
      expect((await storage.reports.get('c')).run).toBeNull();
      await storage.close();
    });

    it('keeps each item’s last three missed events once the event log has moved on past them (a failure keeps its examples), through the trim', async () => {
      const storage = await open();
      const missed = (item: string, note: string) => ({ at: 1, item, outcome: 'missed' as const, note });
      await storage.reports.change('a', { events: ['1', '2', '3', '4'].map((n) => missed('fault.timeout', `timeout ${n}`)) });
      await storage.reports.change('a', { events: [missed('error.create-400', 'sent again unchanged')] });
      for (let n = 0; n < storage.reports.size + 5; n += 1) await storage.reports.change('a', { events: [{ at: 2, item: 'op.tracking', outcome: 'exercised', note: `read ${n}` }] });
      // PostgreSQL trims in the background after a write, at most once a second: one more write a second later.
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      await storage.reports.change('a', { events: [{ at: 3, item: 'op.tracking', outcome: 'exercised', note: 'last read' }] });
      await new Promise((resolve) => setTimeout(resolve, 300));
      const a = await storage.reports.get('a');
      expect(a.events).toHaveLength(storage.reports.size);
      expect(a.missed.map((e) => e.note)).toEqual(['timeout 2', 'timeout 3', 'timeout 4', 'sent again unchanged']);
      await storage.close();
    });

    it('bounds a client’s marks at MARKS_KEPT, dropping the oldest others before a request still waiting for its retry or a mark of the run', async () => {
      const storage = await open();
      const mark = (wall: number, detail: Record<string, string | number | null> = {}) => ({ at: wall, wall, detail });
      await storage.reports.change('a', { marks: { 'retry:createOrder:aaaa': mark(1, { kind: '503-retried' }), ...Object.fromEntries(RUN_MARK_KEYS.map((key) => [key, mark(0)])) } });
      for (let n = 0; n < 6; n += 1) await storage.reports.change('a', { marks: Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`404:AWB${n * 100 + i}`, mark(10 + n * 100 + i)])) });
      // PostgreSQL trims in the background after a write, at most once a second: one more write a second later.
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      await storage.reports.change('a', { marks: { '404:AWB599': mark(700) } });
      await expect.poll(async () => Object.keys((await storage.reports.get('a')).marks).length, { timeout: 5_000, interval: 200 }).toBe(MARKS_KEPT);
      const { marks } = await storage.reports.get('a');
      expect(marks['retry:createOrder:aaaa']).toBeDefined();
      for (const key of RUN_MARK_KEYS) expect(marks[key]).toBeDefined();
      expect(marks['404:AWB599']).toBeDefined();
      expect(marks['404:AWB0']).toBeUndefined();
      await storage.close();
    });

    it('bounds a client’s marks at MARKS_KEPT, dropping requests waiting for their retry before the marks of the run', async () => {
      const storage = await open();
      const mark = (wall: number, detail: Record<string, string | number | null> = {}) => ({ at: wall, wall, detail });
      await storage.reports.change('a', { marks: Object.fromEntries(RUN_MARK_KEYS.map((key) => [key, mark(0)])) });
      for (let n = 0; n < 6; n += 1) await storage.reports.change('a', { marks: Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`retry:createOrder:${n * 100 + i}`, mark(10 + n * 100 + i, { kind: '503-retried' })])) });
      // PostgreSQL trims in the background after a write, at most once a second: one more write a second later.
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      await storage.reports.change('a', { marks: { 'retry:createOrder:599': mark(700, { kind: '503-retried' }) } });
      await expect.poll(async () => Object.keys((await storage.reports.get('a')).marks).length, { timeout: 5_000, interval: 200 }).toBe(MARKS_KEPT);
      const { marks } = await storage.reports.get('a');
      for (const key of RUN_MARK_KEYS) expect(marks[key]).toBeDefined();
      expect(marks['retry:createOrder:0']).toBeUndefined();
      await storage.close();
    });

    it('keeps client settings with versions', async () => {
      const storage = await open();
      const first = await storage.settings.put({ client_id: 'a', webhook: null, generated_secret: 'whsec_x', faults: [], fault_seq: 0 });
      const second = await storage.settings.put({ ...first, fault_seq: 1 });
      await expect(storage.settings.put({ ...first, fault_seq: 2 })).rejects.toBeInstanceOf(Conflict);
      expect((await storage.settings.get('a'))?.fault_seq).toBe(1);
      expect(second.version).toBe(first.version + 1);
      await storage.close();
    });

    it('keeps a client’s endpoints in its settings, and settings written before endpoints existed read back without any', async () => {
      const storage = await open();
      const before = await storage.settings.put({ client_id: 'a', webhook: { url: 'http://127.0.0.1:9/old', disabled_at: null, disabled_reason: null, updated_at: 1 }, generated_secret: 'whsec_x', faults: [], fault_seq: 0 });
      expect(before.endpoints).toBeUndefined();
      const endpoint = { id: 'ep_1', target: { type: 'url' as const, url: 'http://127.0.0.1:9/new' }, secret: 'whsec_y', events: ['awb.generated' as const], description: 'dev', disabled_at: null, disabled_reason: null, created_at: 2, updated_at: 2 };
      const listener = { ...endpoint, id: 'ep_2', target: { type: 'listener' as const, name: 'laptop' }, events: null };
      await storage.settings.put({ ...before, endpoints: [endpoint, listener] });
      expect(await storage.settings.get('a')).toMatchObject({ webhook: { url: 'http://127.0.0.1:9/old' }, endpoints: [endpoint, listener] });
      await storage.close();
    });

    it('finds what retention removes, of every client or of one: orders and settled deliveries made before a time, journal entries', async () => {
      const storage = await open();
      await storage.orders.insert(orderRecord('61', 'a', 1_000));
      await storage.orders.insert(orderRecord('62', 'b', 2_000));
      await storage.orders.insert(orderRecord('63', 'a', 3_000));
      const numbers = (orders: Array<{ order_no: string }>) => orders.map((o) => o.order_no);
      expect(numbers(await storage.orders.createdBefore(2_500, 10))).toEqual(['61', '62']);
      expect(numbers(await storage.orders.createdBefore(3_500, 10, 'a'))).toEqual(['61', '63']);
      expect(numbers(await storage.orders.createdBefore(3_500, 1, 'a'))).toEqual(['61']);
      expect(numbers(await storage.orders.createdBefore(3_500, 10, 'nobody'))).toEqual([]);
      const delivery = (id: string, seq: number, clientId: string, status: 'delivered' | 'pending') => ({
        id, seq, client_id: clientId, event: 'awb.generated' as const, order_no: '61', body: '{}', chaos: [], status, created_at: seq * 1_000, next_attempt_at: null, last_error: null, attempts: [],
      });
      await storage.deliveries.insert(delivery('msg_1', 1, 'a', 'delivered'));
      await storage.deliveries.insert(delivery('msg_2', 2, 'b', 'delivered'));
      await storage.deliveries.insert(delivery('msg_3', 3, 'a', 'pending'));
      await storage.deliveries.insert(delivery('msg_4', 4, 'a', 'delivered'));
      const ids = (deliveries: Array<{ id: string }>) => deliveries.map((d) => d.id);
      expect(ids(await storage.deliveries.settledBefore(2_500, 10))).toEqual(['msg_1', 'msg_2']);
      expect(ids(await storage.deliveries.settledBefore(4_500, 10, 'a'))).toEqual(['msg_1', 'msg_4']);
      expect(ids(await storage.deliveries.settledBefore(4_500, 10, 'b'))).toEqual(['msg_2']);
      const entry = (id: number) => ({ id, at: new Date(id * 1_000).toISOString(), method: 'GET', path: '/v1/couriers', query: {}, operation_id: 'listCouriers', headers: {}, body: null, status: 200, duration_ms: 1, violations: [], aborted: false });
      for (const id of [1, 2, 3]) {
        await storage.requests.append('a', entry(id));
        await storage.requests.append('b', entry(id));
      }
      expect(await storage.requests.prune(2_500, 'a')).toBe(2);
      const paths = async (clientId: string) => (await storage.requests.list(clientId, {})).map((e) => e.id);
      expect(await paths('a')).toEqual([3]);
      expect(await paths('b')).toEqual([1, 2, 3]);
      expect(await storage.requests.prune(1_500)).toBe(1);
      expect(await paths('b')).toEqual([2, 3]);
      await storage.close();
    });

    it('reads many orders and deliveries at once, and removes them in a unit of work whatever else the unit holds back', async () => {
      const storage = await open();
      const delivery = (id: string, clientId: string, orderNo: string, seq: number) => ({
        id, seq, client_id: clientId, event: 'awb.generated' as const, order_no: orderNo, body: '{}', chaos: [], status: 'delivered' as const, created_at: seq, next_attempt_at: null, last_error: null, attempts: [],
      });
      for (let i = 1; i <= 4; i += 1) await storage.orders.insert(orderRecord(`8${i}`, i === 4 ? 'b' : 'a', i));
      await storage.deliveries.insert(delivery('msg_81a', 'a', '81', 1));
      await storage.deliveries.insert(delivery('msg_81b', 'a', '81', 2));
      await storage.deliveries.insert(delivery('msg_82', 'a', '82', 3));
      await storage.deliveries.insert(delivery('msg_84', 'b', '84', 4));
      const sorted = (ids: string[]) => [...ids].sort();
      // Numbers that are gone (or never were) are left out; getMany reads by number, whoever's.
      expect(sorted((await storage.orders.getMany(['81', '83', '84', '99'])).map((o) => o.order_no))).toEqual(['81', '83', '84']);
      expect(await storage.orders.getMany([])).toEqual([]);
      expect(sorted((await storage.deliveries.getMany(['msg_81a', 'msg_84', 'msg_none'])).map((d) => d.id))).toEqual(['msg_81a', 'msg_84']);
      expect(await storage.deliveries.getMany([])).toEqual([]);
      // An order's deliveries of that client only, up to the limit.
      expect(sorted((await storage.deliveries.ofOrders('a', ['81', '82', '84'], 10)).map((d) => d.id))).toEqual(['msg_81a', 'msg_81b', 'msg_82']);
      expect(await storage.deliveries.ofOrders('a', ['81', '82'], 2)).toHaveLength(2);
      expect(await storage.deliveries.ofOrders('b', ['81'], 10)).toEqual([]);
      expect(await storage.deliveries.ofOrders('a', [], 10)).toEqual([]);
      // Removals in a unit go with its commit: nothing is removed when the unit then fails,
      // and a stale order version fails the unit with a Conflict, keeping the rest.
      const [o81, o82] = [(await storage.orders.get('81'))!, (await storage.orders.get('82'))!];
      await storage.jobs.schedule({ kind: 'awb', key: '81', client_id: 'a', due_at: 50 });
      await expect(
        storage.transaction(async (tx) => {
          await tx.jobs.cancel('awb', '81');
          await tx.deliveries.remove((await tx.deliveries.get('msg_81a'))!);
          await tx.orders.remove(o81);
          throw new Error('half way');
        }),
      ).rejects.toThrow('half way');
      await storage.orders.update({ ...o82, status: 'awb_generated' });
      await expect(
        storage.transaction(async (tx) => {
          await tx.orders.remove(o81);
          await tx.orders.remove(o82);
        }),
      ).rejects.toBeInstanceOf(Conflict);
      expect(sorted((await storage.orders.getMany(['81', '82'])).map((o) => o.order_no))).toEqual(['81', '82']);
      expect(await storage.jobs.get('awb', '81')).toBeDefined();
      expect(await storage.deliveries.get('msg_81a')).toBeDefined();
      await storage.transaction(async (tx) => {
        await tx.jobs.cancel('awb', '81');
        for (const d of await tx.deliveries.ofOrders('a', ['81'], 10)) await tx.deliveries.remove(d);
        await tx.orders.remove(o81);
      });
      expect(await storage.orders.get('81')).toBeUndefined();
      expect(await storage.jobs.get('awb', '81')).toBeUndefined();
      expect(await storage.deliveries.ofOrders('a', ['81', '82'], 10)).toHaveLength(1);
      await storage.close();
    });

    it('lists the deliveries to one endpoint: those without an endpoint id are the default endpoint’s', async () => {
      const storage = await open();
      const delivery = (id: string, seq: number, endpointId?: string) => ({
        id, seq, client_id: 'a', ...(endpointId ? { endpoint_id: endpointId } : {}), event: 'awb.generated' as const, order_no: '51', body: '{}', chaos: [], status: 'pending' as const, created_at: seq, next_attempt_at: null, last_error: null, attempts: [],
      });
      await storage.deliveries.insert(delivery('msg_1', 1));
      await storage.deliveries.insert(delivery('msg_2', 2, 'ep_1'));
      await storage.deliveries.insert(delivery('msg_3', 3, 'ep_2'));
      await storage.deliveries.insert(delivery('msg_4', 4, 'ep_1'));
      const ids = async (endpointId?: string) => (await storage.deliveries.list('a', { limit: 10, endpoint_id: endpointId })).items.map((d) => d.id);
      expect(await ids('ep_1')).toEqual(['msg_4', 'msg_2']);
      expect(await ids('default')).toEqual(['msg_1']);
      expect(await ids()).toEqual(['msg_4', 'msg_3', 'msg_2', 'msg_1']);
      expect((await storage.deliveries.list('a', { limit: 1, endpoint_id: 'ep_1' })).total).toBe(2);
      expect((await storage.deliveries.get('msg_2'))?.endpoint_id).toBe('ep_1');
      await storage.close();
    });

    if (faults) {
      it('answers a commit that cannot be written with Unavailable and changes nothing: records, lookups, listings, jobs, counters', async () => {
        const storage = await open();
        const kept = await storage.orders.insert(orderRecord('51', 'a', 1, { awb: 'JN1' }));
        await storage.jobs.schedule({ kind: 'awb', key: '51', client_id: 'a', due_at: 10 });
        expect(storage.health().writable).toBe(true);

        faults.fail();
        await expect(
          storage.transaction(async (tx) => {
            await tx.orders.insert(orderRecord('52', 'a', 2, { awb: 'JN2' }));
            await tx.orders.update({ ...kept, status: 'cancelled', awb: 'JN9' });
            await tx.jobs.schedule({ kind: 'awb', key: '52', client_id: 'a', due_at: 5 });
            await tx.jobs.cancel('awb', '51');
            await tx.counters.next('order');
            await tx.meta.set('seed', 'lost');
          }),
        ).rejects.toBeInstanceOf(Unavailable);
        expect(storage.health()).toMatchObject({ writable: false, error: expect.any(String) });
        expect(await storage.orders.get('52')).toBeUndefined();
        expect(await storage.orders.byAwb('JN2')).toBeUndefined();
        expect(await storage.orders.batchExists('752')).toBe(false);
        expect(await storage.orders.get('51')).toMatchObject({ status: 'created', awb: 'JN1', version: 1 });
        expect((await storage.orders.byAwb('JN1'))?.order_no).toBe('51');
        expect(await storage.orders.byAwb('JN9')).toBeUndefined();
        expect(await storage.orders.list('a', { limit: 10 })).toMatchObject({ total: 1, items: [{ order_no: '51' }] });
        expect(await storage.orders.count()).toBe(1);
        expect(await storage.jobs.nextDue()).toBe(10);
        expect(await storage.jobs.count('a')).toBe(1);
        expect(await storage.meta.get('seed')).toBeUndefined();

        // A due job whose completion cannot be written stays due: given back, it is claimed again.
        const [job] = await storage.jobs.claim({ until: 10, limit: 5, owner: 'w1', leaseMs: 60_000 });
        await expect(storage.jobs.complete(job!)).rejects.toBeInstanceOf(Unavailable);
        await storage.jobs.release(job!);

        faults.heal();
        expect((await storage.jobs.claim({ until: 10, limit: 5, owner: 'w1', leaseMs: 60_000 })).map((j) => j.key)).toEqual(['51']);
        expect(await storage.counters.next('order')).toBe(1);
        await storage.orders.insert(orderRecord('52', 'a', 2, { awb: 'JN2' }));
        expect(storage.health()).toEqual({ writable: true });
        expect((await storage.orders.byAwb('JN2'))?.order_no).toBe('52');
        await storage.close();
        if (reopen) {
          const again = await reopen();
          expect(await again.orders.count()).toBe(2);
          expect(await again.orders.get('51')).toMatchObject({ status: 'created', version: 1 });
          expect(await again.counters.next('order')).toBe(2);
          await again.close();
        }
      });
    }

    if (reopen) {
      it('keeps every committed record, job and counter across a close and reopen', async () => {
        const storage = await open();
        await storage.transaction(async (tx) => {
          await tx.orders.insert(orderRecord('51', 'a', 1, { awb: 'JN1' }));
          await tx.jobs.schedule({ kind: 'awb', key: '51', client_id: 'a', due_at: 7 });
          await tx.counters.next('order');
          await tx.meta.set('seed', 's1');
        });
        await storage.close();
        const again = await reopen();
        expect((await again.orders.byAwb('JN1'))?.order_no).toBe('51');
        expect(await again.jobs.nextDue()).toBe(7);
        expect(await again.counters.next('order')).toBe(2);
        expect(await again.meta.get('seed')).toBe('s1');
        await again.close();
      });
    }
  });
}
