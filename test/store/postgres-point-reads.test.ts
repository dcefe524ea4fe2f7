import { Conflict } from '../../src/shared/errors.js';
import { Socket } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emptySettings } from '../../src/store/settings-writer.js';
import { PostgresStorage } from '../../src/store/postgres/storage.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';
import { orderRecord } from './contract.js';
import { createRequest } from '../support/orders.js';
import { Receiver } from '../webhooks/receiver.js';
import { webhookSandbox } from '../webhooks/support.js';

let server: TestPostgres;
beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(() => server?.stop());

/**
 * Counts what this process sends to the database at `url` from now until `stop`: socket
 * writes that reach the kernel (an uncorked write, or the flush of a corked group) and
 * each statement with the number of writes made before it was asked for. `writesWith`
 * counts the writes of the one connection that sent a statement, `connectionsOf` the
 * connections statements went on: background work on connections of its own (the health
 * check's probe, a `SELECT 1` once a second when nothing else was answered; the delivery
 * ranks' read of the database's clock) may write at any time, on a busy machine within a
 * test's window.
 */
function countTraffic(url: string): {
  statements: Array<[number, string]>;
  writesWith: (match: (text: string) => boolean) => number;
  connectionsOf: (match: (text: string) => boolean) => number;
  stop: () => void;
} {
  const port = Number(new URL(url).port);
  const statements: Array<[number, string]> = [];
  const carriers: Array<[string, Socket]> = [];
  const perSocket = new Map<Socket, number>();
  let writes = 0;
  const wrote = (socket: Socket): void => {
    writes += 1;
    perSocket.set(socket, (perSocket.get(socket) ?? 0) + 1);
  };
  const { write, uncork } = Socket.prototype;
  const query = pg.Client.prototype.query;
  Socket.prototype.write = function (this: Socket, ...args: unknown[]) {
    if (this.remotePort === port && this.writableCorked === 0) wrote(this);
    return (write as (...a: unknown[]) => boolean).apply(this, args);
  } as typeof write;
  Socket.prototype.uncork = function (this: Socket) {
    if (this.remotePort === port && this.writableCorked === 1) wrote(this);
    return uncork.call(this);
  };
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const arg = args[0] as string | { text: string };
    const text = typeof arg === 'string' ? arg : arg.text;
    statements.push([writes, text]);
    carriers.push([text, (this as unknown as { connection: { stream: Socket } }).connection.stream]);
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  return {
    statements,
    connectionsOf: (match) => new Set(carriers.filter(([text]) => match(text)).map(([, socket]) => socket)).size,
    writesWith: (match) => {
      const socket = carriers.find(([text]) => match(text))?.[1];
      return socket ? (perSocket.get(socket) ?? 0) : 0;
    },
    stop: () => {
      Object.assign(Socket.prototype, { write, uncork });
      pg.Client.prototype.query = query;
    },
  };
}

/** The connections the requests' pool has opened so far. */
const opened = (storage: PostgresStorage): number => (storage as unknown as { connections: { pool: { totalCount: number } } }).connections.pool.totalCount;

describe('PostgreSQL point reads outside a unit of work', () => {
  it('sends the reads of one turn of the event loop together on one connection, each answered with its own row', async () => {
    const storage = await PostgresStorage.open({ url: await server.freshDatabase(), requestLogSize: 10 });
    try {
      const numbers = Array.from({ length: 12 }, (_, i) => String(5_000_000_000 + i));
      await storage.transaction(async (tx) => {
        for (const [i, orderNo] of numbers.entries()) await tx.orders.insert({ ...orderRecord(orderNo, i % 2 === 0 ? 'a' : 'b', 1_000 + i), awb: `JN${orderNo}` });
      });
      const before = opened(storage);
      const read = await Promise.all([...numbers.map((n) => storage.orders.get(n)), ...numbers.map((n) => storage.orders.byAwb(`JN${n}`)), storage.orders.get('missing')]);
      expect(read.slice(0, 12).map((o) => o?.order_no)).toEqual(numbers);
      expect(read.slice(12, 24).map((o) => o?.awb)).toEqual(numbers.map((n) => `JN${n}`));
      expect(read[24]).toBeUndefined();
      // 25 reads at once: two groups (of at most 16) at most, where one connection each would open the pool's ten.
      expect(opened(storage) - before).toBeLessThanOrEqual(2);
      // The group's connections went back to the pool: the next reads and a unit of work find them.
      expect((await storage.orders.get(numbers[0]!))?.client_id).toBe('a');
      await storage.transaction(async (tx) => tx.orders.update((await tx.orders.get(numbers[1]!))!));
      expect((await storage.orders.get(numbers[1]!))?.version).toBe(2);
    } finally {
      await storage.close();
    }
  });
});

describe("PostgreSQL reads along with a request's clock", () => {
  it('reads the order a request said it reads in its clock statement, hands it to the first read of that AWB only, and never to a unit of work', async () => {
    const url = await server.freshDatabase();
    const storage = await PostgresStorage.open({ url, requestLogSize: 10 });
    try {
      await storage.settings.put(emptySettings('a'));
      await storage.orders.insert({ ...orderRecord('5000000200', 'a', 1_000), awb: 'JN5000000200' });
      const scope = storage.requestScope!;
      const traffic = countTraffic(url);
      const sentAfterClock: number[] = [];
      let read: Array<string | number | undefined> = [];
      try {
        await scope.run(async () => {
          scope.readsOrder('JN5000000200');
          await storage.sharedClocks!.read(['a']);
          const sent = () => traffic.statements.length;
          // Another client's read of the AWB is not handed what was read for this one: it reads, finds none, and leaves it.
          const another = await storage.orders.byAwb('JN5000000200', 'b');
          const before = sent();
          const first = await storage.orders.byAwb('JN5000000200', 'a');
          sentAfterClock.push(sent() - before);
          const again = await storage.orders.byAwb('JN5000000200', 'a');
          const inUnit = await storage.transaction((tx) => tx.orders.byAwb('JN5000000200', 'a'));
          const settings = await storage.settings.get('a');
          read = [first?.order_no, first?.version, again?.version, inUnit?.version, settings?.client_id, another?.order_no];
        });
      } finally {
        traffic.stop();
      }
      expect(read).toEqual(['5000000200', 1, 1, 1, 'a', undefined]);
      // The first read of the AWB sent nothing: the clock statement had read it.
      expect(sentAfterClock).toEqual([0]);
      const statements = traffic.statements.map(([, text]) => text).filter((text) => text !== 'BEGIN' && text !== 'COMMIT');
      expect(statements.filter((text) => text.includes('FROM clocks') && text.includes('FROM orders WHERE awb') && text.includes('FROM client_settings'))).toHaveLength(1);
      // The clock statement, the second read, the unit's read, the other client's; the settings came with the clock.
      expect(statements.filter((text) => text.includes('FROM orders WHERE awb'))).toHaveLength(4);
      expect(statements.filter((text) => text.includes('FROM client_settings'))).toHaveLength(1);

      // An AWB no order has: the request's read answers none without asking again; another AWB is read as ever.
      const unknown = await scope.run(async () => {
        scope.readsOrder('JN0000000000');
        await storage.sharedClocks!.read(['a']);
        return [await storage.orders.byAwb('JN0000000000', 'a'), (await storage.orders.byAwb('JN5000000200', 'a'))?.order_no];
      });
      expect(unknown).toEqual([undefined, '5000000200']);
    } finally {
      await storage.close();
    }
  });

  it('reads afresh an order read with the clock that waited (a latency rule, a long turn), or whose request ended', async () => {
    const url = await server.freshDatabase();
    const storage = await PostgresStorage.open({ url, requestLogSize: 10 });
    const other = await PostgresStorage.open({ url, requestLogSize: 10 });
    try {
      await storage.orders.insert({ ...orderRecord('5000000300', 'a', 1_000), awb: 'JN5000000300' });
      const scope = storage.requestScope!;
      const waited = await scope.run(async () => {
        scope.readsOrder('JN5000000300');
        await storage.sharedClocks!.read(['a']);
        await other.orders.update({ ...(await other.orders.get('5000000300'))!, status: 'awb_generated' });
        await new Promise((resolve) => setTimeout(resolve, 120));
        return (await storage.orders.byAwb('JN5000000300', 'a'))?.version;
      });
      expect(waited).toBe(2);
      // Work a request leaves running after it ended does not take what it read with its clock.
      const after = await scope.run(async () => {
        scope.readsOrder('JN5000000300');
        await storage.sharedClocks!.read(['a']);
        await other.orders.update({ ...(await other.orders.get('5000000300'))!, status: 'in_transit' });
        scope.endPreRead(true);
        return (await storage.orders.byAwb('JN5000000300', 'a'))?.version;
      });
      expect(after).toBe(3);
    } finally {
      await other.close();
      await storage.close();
    }
  });
});

describe('PostgreSQL removals beside other replicas', () => {
  it('holds the orders a removal read in its unit: another replica changing one waits, so the removal is not tried again', async () => {
    const url = await server.freshDatabase();
    const storage = await PostgresStorage.open({ url, requestLogSize: 10 });
    const other = await PostgresStorage.open({ url, requestLogSize: 10 });
    try {
      await storage.orders.insert(orderRecord('5000000400', 'a', 1_000));
      await storage.orders.insert(orderRecord('5000000401', 'a', 1_001));
      let attempts = 0;
      const { change } = await storage.transaction(async (tx) => {
        attempts += 1;
        const orders = await tx.orders.getMany(['5000000400', '5000000401']);
        // An AWB job of another replica changes one of them meanwhile (read before the removal's commit).
        const read = (await other.orders.get('5000000400'))!;
        const changing = other.orders.update({ ...read, status: 'awb_generated' }).then(() => 'changed', (error: unknown) => (error instanceof Conflict ? 'conflict' : String(error)));
        await new Promise((resolve) => setTimeout(resolve, 100));
        for (const order of orders) await tx.orders.remove(order);
        return { change: changing };
      });
      expect(attempts).toBe(1);
      // The job's change came after the removal: the order was gone (the job meets a Conflict and finds it gone when it tries again).
      expect(await change).toBe('conflict');
      expect(await storage.orders.getMany(['5000000400', '5000000401'])).toEqual([]);
    } finally {
      await other.close();
      await storage.close();
    }
  });
});

describe('PostgreSQL reads in a unit of work', () => {
  it('sends the reads a unit asks for at once in one write, and reads a client’s settings once', async () => {
    const url = await server.freshDatabase();
    const storage = await PostgresStorage.open({ url, requestLogSize: 10 });
    try {
      await storage.settings.put(emptySettings('a'));
      await storage.transaction(async (tx) => void (await tx.orders.insert(orderRecord('5000000100', 'a', 1_000))));
      const traffic = countTraffic(url);
      try {
        await storage.transaction(async (tx) => {
          // As an AWB job does: the client's settings asked for beside the order, then read again where its webhook is made.
          const [settings, order] = await Promise.all([tx.settings.get('a'), tx.orders.get('5000000100')]);
          expect(settings?.client_id).toBe('a');
          expect((await tx.settings.get('a'))?.version).toBe(settings!.version);
          await tx.orders.update({ ...order!, status: 'awb_generated' });
        });
      } finally {
        traffic.stop();
      }
      const statements = traffic.statements.map(([, text]) => text);
      expect(statements.filter((text) => text.includes('FROM client_settings'))).toHaveLength(1);
      expect(statements.filter((text) => text.includes('FROM orders'))).toHaveLength(1);
      // All on the unit's connection: BEGIN with both reads, then the update with the COMMIT.
      expect(traffic.connectionsOf((text) => text === 'BEGIN' || text === 'COMMIT' || /\borders\b|\bclient_settings\b/.test(text))).toBe(1);
      expect(traffic.writesWith((text) => text.includes('FROM client_settings'))).toBe(2);
      expect((await storage.orders.get('5000000100'))?.status).toBe('awb_generated');
    } finally {
      await storage.close();
    }
  });

  it('reads a client’s settings in a unit as the unit last wrote them', async () => {
    const storage = await PostgresStorage.open({ url: await server.freshDatabase(), requestLogSize: 10 });
    try {
      await storage.settings.put(emptySettings('a'));
      const seen = await storage.transaction(async (tx) => {
        const before = (await tx.settings.get('a'))!;
        await tx.settings.put({ ...before, fault_seq: 7 });
        return tx.settings.get('a');
      });
      expect(seen).toMatchObject({ fault_seq: 7, version: 2 });
      expect(await storage.settings.get('a')).toMatchObject({ fault_seq: 7, version: 2 });
      // Read through the storage rather than the unit's own repositories, a later unit still reads them afresh.
      expect((await storage.transaction(async () => storage.settings.get('a')))?.version).toBe(2);
      await storage.transaction(async (tx) => void (await tx.settings.put({ ...(await tx.settings.get('a'))!, fault_seq: 9 })));
      expect((await storage.transaction(async () => storage.settings.get('a')))?.version).toBe(3);
    } finally {
      await storage.close();
    }
  });

  it('meets a Conflict when another replica changed the settings the unit read, and reads them afresh when it tries again', async () => {
    const url = await server.freshDatabase();
    const storage = await PostgresStorage.open({ url, requestLogSize: 10 });
    const other = await PostgresStorage.open({ url, requestLogSize: 10 });
    try {
      await storage.settings.put(emptySettings('a'));
      let attempts = 0;
      const result = await storage.transaction(async (tx) => {
        attempts += 1;
        const read = (await tx.settings.get('a'))!;
        if (attempts === 1) await other.settings.put({ ...(await other.settings.get('a'))!, fault_seq: 5 });
        const again = (await tx.settings.get('a'))!;
        return tx.settings.put({ ...again, fault_seq: again.fault_seq + 100, version: read.version });
      });
      expect(attempts).toBe(2);
      expect(result).toMatchObject({ version: 3, fault_seq: 105 });
    } finally {
      await other.close();
      await storage.close();
    }
  });

  it('an AWB job of a sandbox sends the client’s settings read, which its webhook needs, in the same write as its order read', async () => {
    const url = await server.freshDatabase();
    const receiver = await Receiver.start();
    const sandbox = await webhookSandbox(receiver.url, { databaseUrl: url });
    try {
      expect((await sandbox.call('POST', '/v1/order', { body: createRequest(1) })).status).toBe(201);
      const traffic = countTraffic(url);
      try {
        await sandbox.advance(60_000);
      } finally {
        traffic.stop();
      }
      // The job's unit: from the BEGIN before its order read to its COMMIT (the webhook's attempt reads the settings again afterwards, outside it).
      const orderRead = traffic.statements.findIndex(([, text]) => /FROM orders WHERE order_no/.test(text));
      expect(orderRead).toBeGreaterThanOrEqual(0);
      const from = traffic.statements.slice(0, orderRead).map(([, text]) => text).lastIndexOf('BEGIN');
      const to = traffic.statements.findIndex(([, text], i) => i > orderRead && text === 'COMMIT');
      const settingsReads = traffic.statements.slice(from, to).filter(([, text]) => text.includes('FROM client_settings'));
      expect(settingsReads.map(([before]) => before)).toEqual([traffic.statements[orderRead]![0]]);
      expect(receiver.received.map((webhook) => webhook.json.event)).toEqual(['awb.generated']);
    } finally {
      await sandbox.close();
      await receiver.close();
    }
  });
});
