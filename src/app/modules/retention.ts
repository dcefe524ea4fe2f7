import type { SandboxModule } from '../../http/index.js';
import type { Services } from '../services.js';

/** The job kind of the retention sweep. */
export const RETENTION_JOB = 'retention';
/** How often the sweep runs, in sandbox time. */
export const RETENTION_EVERY_MS = 3_600_000;

/**
 * `--retention <duration>`: at start and then every sandbox hour, removes the orders
 * created longer ago than the retention (on the sandbox clock), and through each
 * module's `prune` hook their deliveries, journal entries and other records of that
 * age. Without a retention it does nothing.
 *
 * `modules` is the module list; it is read at each sweep, so modules added after this
 * one are pruned too.
 *
 * @example sandboxModules = (services) => { const list = [...]; list.push(retentionModule(services, list)); return list; }
 */
export function retentionModule(services: Pick<Services, 'options' | 'storage' | 'scheduler' | 'clock' | 'logger' | 'orders'>, modules: readonly SandboxModule[]): SandboxModule {
  const retention = services.options.retention;
  const { storage, scheduler, clock, logger, orders } = services;

  const sweep = async (at: number): Promise<void> => {
    const olderThan = at - retention!;
    const removed: Record<string, number> = {};
    const count = await orders.removeOlderThan(olderThan);
    if (count > 0) removed.orders = count;
    for (const m of modules) {
      const pruned = (await m.prune?.(olderThan)) ?? 0;
      if (pruned > 0) removed[m.name] = pruned;
    }
    if (Object.keys(removed).length > 0) logger.info({ removed, older_than: new Date(olderThan).toISOString() }, 'retention sweep');
  };
  const scheduleNext = (at: number) => storage.jobs.schedule({ kind: RETENTION_JOB, key: 'sweep', client_id: '', due_at: at + RETENTION_EVERY_MS });

  return {
    name: 'retention',
    async start() {
      if (retention === undefined) return;
      // The next sweep is scheduled whatever this one met, so a sweep that failed (a store
      // that cannot write, say) does not end retention.
      const sweepThenNext = async (at: number): Promise<void> => {
        try {
          await sweep(at);
        } catch (error) {
          logger.warn({ err: error, next_at: new Date(at + RETENTION_EVERY_MS).toISOString() }, 'retention sweep failed; the next one runs as planned');
        }
        await scheduleNext(at);
      };
      scheduler.register({ kind: RETENTION_JOB, run: async (_job, at) => sweepThenNext(at) });
      await sweepThenNext(clock.now());
    },
  };
}
