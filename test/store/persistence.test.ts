import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSandbox } from '../../src/app/sandbox.js';
import { createRequest } from '../support/orders.js';
import { tempDir } from '../support/tmp.js';

describe('the data file', () => {
  const dir = tempDir();

  it('holds all 100 orders of 100 concurrent creates after the server closes', async () => {
    const data = join(dir(), 'sandbox.json');
    const sandbox = await createSandbox({ port: 0, data, tokens: ['t'], clock: 'manual' });
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        fetch(`${sandbox.url}/v1/order`, {
          method: 'POST',
          headers: { authorization: 'Bearer t', 'content-type': 'application/json' },
          body: JSON.stringify(createRequest(1, { sender_name: `Sender ${i}` })),
        }).then(async (r) => ({ status: r.status, body: await r.json() })),
      ),
    );
    await sandbox.close();
    expect(answers.every((a) => a.status === 201)).toBe(true);
    const numbers = answers.map((a) => a.body.order_numbers[0] as string);
    const file = JSON.parse(readFileSync(data, 'utf8'));
    expect(file.schema_version).toEqual(expect.any(Number));
    expect(Object.keys(file.orders).sort()).toEqual([...numbers].sort());
    const senders = new Set(Object.values(file.orders as Record<string, { sender: { sender_name: string } }>).map((o) => o.sender.sender_name));
    expect(senders.size).toBe(100);
  });
});
