import type { SandboxModule } from '../../http/index.js';
import type { Services } from '../services.js';
import { ordersRemoved } from './orders-removed.js';
import { RetentionByCount } from './retention-by-count.js';

/** The job kind of the retention sweep. */
export const RETENTION_JOB = 'retention';
/** How often the sweep runs, in sandbox time. */
export const RETENTION_EVERY_MS = 3_600_000;

/**
 * `--retention <duration>`: at start and then every sandbox hour, removes the orders
 * created longer ago than the retention, and through each module's `prune` hook their
 * deliveries, journal entries and other records of that age. Without a retention it
 * does nothing.
 *
 * A client's records carry its own clock's times, which run ahead of the sandbox's by
 * what the client advanced it. So each client whose clock is ahead has its records
 * removed by its own clock first (a partner that moved its clock a year on would
 * otherwise keep everything it makes for that year, whatever the retention); then
 * everyone's by the sandbox clock, which also reaches clients no longer configured.
 *
 * `--retention-orders <n>`: past n orders, a client's oldest are removed, and then its
 * records older than the oldest order it keeps (see RetentionByCount).
 *
 * `modules` is the module list; it is read at each sweep, so modules added after this
 * one are pruned too.
 *
 * @example sandboxModules = (services) => { const list = [...]; list.push(retentionModule(services, list)); return list; }
 */
export function retentionModule(services: Pick<Services, 'options' | 'storage' | 'scheduler' | 'clock' | 'logger' | 'orders' | 'registry' | 'metrics'>, modules: readonly SandboxModule[]): SandboxModule {
  const { retention, retentionOrders } = services.options;
  const { storage, scheduler, clock, logger, orders, registry, metrics } = services;

  /** Each module's records older than `olderThan` (of one client or of all) removed: adds to `removed` how many, by module. */
  const prune = async (olderThan: number, clientId: string | undefined, removed: Record<string, number>): Promise<void> => {
    for (const m of modules) {
      const pruned = (await m.prune?.(olderThan, clientId)) ?? 0;
      if (pruned > 0) removed[m.name] = pruned;
    }
  };
  const logRemoved = (removed: Record<string, number>, olderThan: number | undefined, fields: Record<string, unknown>): void => {
    if (Object.keys(removed).length > 0) logger.info({ removed, ...(olderThan !== undefined ? { older_than: new Date(olderThan).toISOString() } : {}), ...fields }, 'retention sweep');
  };
  /** Removes what is older than `olderThan`, of one client or of all; logs what it removed. */
  const removeOlderThan = async (olderThan: number, clientId?: string): Promise<void> => {
    const removed: Record<string, number> = {};
    const count = await orders.removeOlderThan(olderThan, clientId);
    if (count > 0) removed.orders = count;
    metrics.ordersRemoved.inc({ reason: 'age' }, count);
    await prune(olderThan, clientId, removed);
    logRemoved(removed, olderThan, clientId !== undefined ? { client: clientId } : {});
  };

  const sweep = async (at: number): Promise<void> => {
    const olderThan = at - retention!;
    for (const clientId of registry.clientIds) {
      // By the client's clock now: never earlier than the sweep's time (no clock moves back), so never more than the retention allows.
      const own = clock.of(clientId) - retention!;
      if (own <= olderThan) continue;
      // One client's sweep that fails leaves the others', and everyone's below, to run.
      await removeOlderThan(own, clientId).catch((error: unknown) => logger.warn({ err: error, client: clientId }, "retention sweep of a client's records by its own clock failed; the sweep goes on"));
    }
    await removeOlderThan(olderThan);
  };
  const byCount =
    retentionOrders > 0
      ? new RetentionByCount(retentionOrders, services, prune, (clientId, { counts, oldestKept }) => {
          metrics.ordersRemoved.inc({ reason: 'count' }, counts.orders ?? 0);
          logRemoved(counts, oldestKept, { client: clientId, retention_orders: retentionOrders });
        }, (clientId, orderNos, removed) => ordersRemoved(modules, clientId, orderNos, removed))
      : undefined;
  const scheduleNext = (at: number) => storage.jobs.schedule({ kind: RETENTION_JOB, key: 'sweep', client_id: '', due_at: at + RETENTION_EVERY_MS });

  return {
    name: 'retention',
    async start() {
      byCount?.start();
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
    close: () => byCount?.stop(),
  };
}
