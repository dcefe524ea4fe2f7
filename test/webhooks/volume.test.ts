import { describe, expect, it } from 'vitest';
import { measureWebhooks } from '../../bench/webhooks.js';

describe('1,000 AWB webhooks', () => {
  it('are all delivered, once each, by one clock advance', async () => {
    const figure = await measureWebhooks(1000);
    expect(figure).toMatchObject({ count: 1000, received: 1000, distinct: 1000 });
    expect(figure.ms).toBeLessThan(20_000);
  });
});
