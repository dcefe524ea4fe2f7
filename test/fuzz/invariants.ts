/** The seed's invariants of a tracking answer (provider-interface.md 2.4, DESIGN "Tracking"), as problems found; empty when it holds them. */
export function trackingProblems(body: { last_status?: unknown; last_update?: unknown; history?: Array<{ update_on?: unknown; status?: unknown; pod_photo?: unknown }> }): string[] {
  const history = body.history ?? [];
  const problems: string[] = [];
  const times = history.map((e) => e.update_on);
  if (!times.every((t) => Number.isInteger(t) && (t as number) > 0)) problems.push(`an epoch that is not a positive integer: ${JSON.stringify(times)}`);
  if (typeof body.last_update !== 'number' || body.last_update <= 0) problems.push(`last_update ${String(body.last_update)} is not positive`);
  for (let i = 1; i < times.length; i++) if ((times[i] as number) > (times[i - 1] as number)) problems.push(`history not newest first at ${i}: ${JSON.stringify(times)}`);
  if (history[0]?.update_on !== body.last_update) problems.push(`history[0].update_on ${String(history[0]?.update_on)} != last_update ${String(body.last_update)}`);
  const newest = history.find((e) => e.status !== null)?.status;
  if (body.last_status !== newest) problems.push(`last_status ${String(body.last_status)} is not the newest non-null status ${String(newest)}`);
  return problems;
}

/** The create answer's invariant: as many distinct order numbers as the request has items. */
export function createProblems(body: { order_numbers?: unknown }, request: unknown): string[] {
  const items = (request as { items?: unknown } | undefined)?.items;
  if (!Array.isArray(items) || !Array.isArray(body.order_numbers)) return [];
  const numbers = body.order_numbers as unknown[];
  if (numbers.length !== items.length) return [`${numbers.length} order numbers for ${items.length} items`];
  if (new Set(numbers).size !== numbers.length) return [`order numbers repeat: ${JSON.stringify(numbers)}`];
  return [];
}
