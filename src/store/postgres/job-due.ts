import { finite, type Where } from './where.js';
import type { ClockLead } from '../../records/index.js';

/**
 * The SQL of a job's due time on the clock `ahead` is measured from: `due_at` less its
 * client's lead (0 for a client not named). The leads go in as two arrays.
 */
export function dueOn(where: Where, ahead: ClockLead | undefined): string {
  const lead = leadsOf(ahead);
  if (lead.length === 0) return 'due_at';
  const clients = where.values.push(lead.map(([client]) => client));
  const leads = where.values.push(lead.map(([, ms]) => ms));
  return `(due_at - COALESCE((SELECT l.ms FROM unnest($${clients}::text[], $${leads}::bigint[]) AS l(client_id, ms) WHERE l.client_id = jobs.client_id), 0))`;
}

/** The clients of `ahead` whose clock runs ahead of (or behind) the sandbox's. */
export const leadsOf = (ahead: ClockLead | undefined): Array<[string, number]> => [...(ahead ?? [])].filter(([, ms]) => Math.round(ms) !== 0).map(([client, ms]) => [client, Math.round(ms)]);

/**
 * Adds "due by `until` on the clock `ahead` is measured from": for a client with a lead,
 * `due_at` up to `until` plus its lead; for the rest, up to `until`. Each part is an index
 * range (jobs_by_client, jobs_by_due), where a comparison of `dueOn`'s expression would
 * be computed for every row of the table, on every wake-up of every replica.
 */
export function dueBy(where: Where, until: number, ahead: ClockLead | undefined): void {
  const leads = leadsOf(ahead);
  if (leads.length === 0) {
    where.add((p) => `due_at <= ${p(finite(until))}`);
    return;
  }
  where.add((p) => {
    const own = leads.map(([client, ms]) => `(client_id = ${p(client)} AND due_at <= ${p(finite(until + ms))})`);
    return `((NOT (client_id = ANY(${p(leads.map(([client]) => client))})) AND due_at <= ${p(finite(until))}) OR ${own.join(' OR ')})`;
  });
}
