import type { Fixtures } from '../fixtures/index.js';
import type { Storage } from '../store/index.js';

/**
 * What the start says of the scenarios its stored orders follow: one line per scenario
 * whose file was removed, or that has fewer steps, since the last start on this data, and
 * that orders still follow (how many, counted over `clientIds`). Such orders keep what they
 * played and play no further step (see Journey.scenarioOf). The steps of each scenario are
 * kept in the data for the next start (written when they changed); a removed one is kept at its former
 * length while orders follow it, so each start says so again until none does; a shortened one is told once.
 *
 * @example for (const line of await scenarioChanges(storage, fixtures, registry.clientIds)) logger.warn(line);
 */
export async function scenarioChanges(storage: Pick<Storage, 'meta' | 'orders'>, fixtures: Pick<Fixtures, 'scenarios'>, clientIds: readonly string[]): Promise<string[]> {
  const before = (await storage.meta.get('scenario_steps')) ?? {};
  const kept: Record<string, number> = Object.fromEntries([...fixtures.scenarios.values()].map((s) => [s.name, s.steps.length]));
  const lines: string[] = [];
  const count = (n: number, what: string): string => `${n} ${what}${n === 1 ? '' : 's'}`;
  for (const [name, steps] of Object.entries(before)) {
    const now = fixtures.scenarios.get(name)?.steps.length;
    if (now !== undefined && now >= steps) continue;
    let orders = 0;
    for (const client of clientIds) orders += (await storage.orders.list(client, { limit: 1, scenario: name })).total;
    if (orders === 0) continue;
    // A removed one is kept at its length while orders follow it, so each start says so; a shortened one is told once.
    if (now === undefined) kept[name] = steps;
    lines.push(
      now === undefined
        ? `scenario ${name} is no longer among the scenarios (its file was removed), and ${count(orders, 'order')} follow it: they keep their history so far and play no further step; an advance or a trigger of one answers 409. Put its file back before their next steps fall due to play them on.`
        : `scenario ${name} has ${count(now, 'step')}, ${steps} before, and ${count(orders, 'order')} follow it: a step it no longer has is shown as a plain scan without its text and status, and is not played.`,
    );
  }
  // Written only when it changed: a start that changes nothing writes nothing.
  const changed = Object.keys(kept).length !== Object.keys(before).length || Object.entries(kept).some(([name, steps]) => before[name] !== steps);
  if (changed) await storage.meta.set('scenario_steps', kept);
  return lines;
}
