import type { TrackingEntry } from '../records/index.js';

/** Statuses whose scan carries a proof-of-delivery photo: POD scan ("2") and returned to sender ("4"). */
const POD_STATUSES = new Set(['2', '4']);

const isEntry = (value: unknown): value is TrackingEntry => typeof value === 'object' && value !== null && typeof (value as TrackingEntry).update_on === 'number';

/**
 * Makes a tracking answer generated from the schema (`Prefer: dynamic=true`) one the
 * provider could send, as every played scenario is: entries newest first,
 * `last_update` the newest entry's time, `last_status` the newest status that is
 * not null (the oldest entry becomes a pick-up scan "1" when none has one), and the
 * photo's address on POD scans only. The schema alone cannot say these; the generated
 * values of each field (times, notes, codes) are kept. Changes `body` in place.
 *
 * @example plausibleTracking(body, 'http://127.0.0.1:4010/__sandbox/pod/JN1.png')
 */
export function plausibleTracking(body: unknown, photoUrl: string): void {
  if (typeof body !== 'object' || body === null) return;
  const answer = body as { last_status?: unknown; last_update?: unknown; history?: unknown };
  if (!Array.isArray(answer.history) || !answer.history.every(isEntry) || answer.history.length === 0) return;
  const history = answer.history;
  history.sort((a, b) => b.update_on - a.update_on);
  if (history.every((entry) => entry.status === null)) history.at(-1)!.status = '1';
  for (const entry of history) entry.pod_photo = POD_STATUSES.has(entry.status ?? '') ? photoUrl : null;
  answer.last_update = history[0]!.update_on;
  answer.last_status = history.find((entry) => entry.status !== null)!.status;
}
