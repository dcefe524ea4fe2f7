import { describe, expect, it } from 'vitest';
import { STOP_RECORD_MARGIN_MS, stopServices } from '../../src/app/stop.js';

/** The parts of the services a stop uses: jobs that end when `jobsEnd` is called, a logger that keeps its warnings, and a record of what happened in which order. */
function services(webhookTimeout: number) {
  const happened: string[] = [];
  let jobsEnd!: () => void;
  const jobsDone = new Promise<void>((resolve) => (jobsEnd = resolve)).then(() => void happened.push('jobs done'));
  const warnings: Array<[Record<string, unknown>, string]> = [];
  const parts = {
    scheduler: { stop: () => jobsDone },
    options: { webhookTimeout },
    logger: { warn: (fields: Record<string, unknown>, message: string) => void warnings.push([fields, message]), error: () => undefined },
    clockService: { saveAll: async () => void happened.push('clocks saved') },
  };
  return { parts: parts as never, jobsEnd, warnings, happened };
}

describe('stopping background work', () => {
  it('waits for the jobs in flight, then closes the modules, then saves the clocks, with no warning', async () => {
    const { parts, jobsEnd, warnings, happened } = services(1_000);
    setTimeout(jobsEnd, 20);
    await stopServices(parts, [{ close: async () => void happened.push('modules closed') } as never]);
    expect(happened).toEqual(['jobs done', 'modules closed', 'clocks saved']);
    expect(warnings).toEqual([]);
  });

  it("cuts jobs short past the webhook timeout and its margin, saying what becomes of an attempt, then closes the modules (which end the jobs)", async () => {
    const { parts, jobsEnd, warnings, happened } = services(50);
    await stopServices(parts, [{ close: async () => (happened.push('modules closed'), jobsEnd()) } as never]);
    expect(happened).toEqual(['modules closed', 'jobs done', 'clocks saved']);
    expect(warnings).toEqual([
      [{ waited_ms: 50 + STOP_RECORD_MARGIN_MS }, expect.stringMatching(/cut short: an attempt not answered yet is abandoned and stays due .*; one answered is recorded if the store takes it, else it stays due too$/)],
    ]);
  });
});
