import { POD_CODES } from '../fixtures/index.js';
import type { TrackingEntry } from '../records/index.js';

/** Statuses whose scan carries a proof-of-delivery photo. */
const POD_STATUSES = new Set<string>(POD_CODES);

/** Where POD photos are served, as a photo link's path begins. */
const POD_PATH = '/__sandbox/pod/';

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

/**
 * A documented tracking example's answer on this sandbox: a copy of `body` whose photo
 * links name `baseUrl`, the address the request came to, instead of the one the spec
 * was written against (`http://127.0.0.1:4010`), so a client following one from any
 * port finds the photo. Anything else is returned as it is.
 *
 * @example rebasedPhotos(example, 'http://127.0.0.1:5000') // pod_photo 'http://127.0.0.1:5000/__sandbox/pod/SBXDLV00000001.png'
 */
export function rebasedPhotos(body: unknown, baseUrl: string): unknown {
  const answer = body as { history?: unknown } | null;
  if (typeof answer !== 'object' || answer === null || !Array.isArray(answer.history) || !answer.history.every(isEntry)) return body;
  // A spec given with --spec may have anything there: only a text link to a photo is rebased.
  const rebase = (url: unknown): unknown => {
    const path = typeof url === 'string' ? url.indexOf(POD_PATH) : -1;
    return path < 0 ? url : `${baseUrl}${(url as string).slice(path)}`;
  };
  return { ...answer, history: answer.history.map((entry) => ({ ...entry, pod_photo: rebase(entry.pod_photo) })) };
}
