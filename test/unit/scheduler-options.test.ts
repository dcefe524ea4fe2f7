import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { schedulerOptions } from '../../src/app/scheduler-options.js';
import { ClientRegistry } from '../../src/clients/index.js';
import { resolveOptions } from '../../src/config/index.js';
import { SandboxMetrics } from '../../src/metrics/index.js';

/** The scheduler's options for `input`, with the log lines they wrote. */
function optionsOf(input: Parameters<typeof resolveOptions>[0]) {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info', base: undefined }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  const options = schedulerOptions(resolveOptions(input), new ClientRegistry([{ token: 'scheduler-options-token' }]), logger, new SandboxMetrics(), undefined);
  return { options, lines };
}

describe('--job-lease on PostgreSQL', () => {
  it('is raised to the webhook timeout + 5 s, and the start says so in its log', () => {
    const { options, lines } = optionsOf({ databaseUrl: 'postgres://sandbox@127.0.0.1:5432/sandbox', jobLease: '5s', webhookTimeout: '10s' });
    expect(options.leaseMs).toBe(15_000);
    expect(lines).toEqual([expect.objectContaining({ level: 30, job_lease_ms: 5_000, lease_ms: 15_000, msg: expect.stringMatching(/^claims on due jobs hold 15000 ms, --webhook-timeout \+ 5 s, rather than the 5000 ms of --job-lease/) })]);
  });

  it('is kept, without a word, when it outlasts an attempt', () => {
    const { options, lines } = optionsOf({ databaseUrl: 'postgres://sandbox@127.0.0.1:5432/sandbox', jobLease: '60s', webhookTimeout: '10s' });
    expect(options.leaseMs).toBe(60_000);
    expect(lines).toEqual([]);
  });
});
