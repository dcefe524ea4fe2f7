import type { SandboxModule } from '../../http/index.js';

/**
 * Each module's records of orders removed by number (see SandboxModule.ordersRemoved: a
 * provider state's teardown, retention by count), the module list read now. Adds to
 * `removed` how many went, by module; returns how many in all.
 */
export async function ordersRemoved(modules: readonly SandboxModule[], clientId: string, orderNos: readonly string[], removed: Record<string, number> = {}): Promise<number> {
  let total = 0;
  for (const m of modules) {
    const n = (await m.ordersRemoved?.(clientId, orderNos)) ?? 0;
    if (n > 0) removed[m.name] = (removed[m.name] ?? 0) + n;
    total += n;
  }
  return total;
}
