import type { Fixtures, LoadedScenario } from '../fixtures/index.js';
import type { Order, TrackingEntry } from '../records/index.js';
import type { PodPhotos } from './pod-photos.js';
import { contextOf, renderStep } from './render.js';

/** The body of GET /v1/order/tracking/{order_no} (provider-interface.md 2.4). */
export interface TrackingResponse {
  last_status: string;
  last_update: number;
  history: TrackingEntry[];
}

const DAY = 86_400_000;

/**
 * The tracking answer for a history (newest first), or undefined before the first
 * scan with a status: then the provider answers 404.
 */
export function trackingOf(history: TrackingEntry[], baseUrl: string, photos: PodPhotos): TrackingResponse | undefined {
  const latest = history.find((entry) => entry.status !== null);
  if (!latest || !history[0]) return undefined;
  return {
    last_status: latest.status!,
    last_update: history[0].update_on,
    history: withPhotoUrls(history, baseUrl, photos),
  };
}

/** The history with each `pod_photo` path made an absolute URL on `baseUrl`, named with its tag (see PodPhotos). */
export const withPhotoUrls = (history: TrackingEntry[], baseUrl: string, photos: PodPhotos): TrackingEntry[] =>
  history.map((entry) => (entry.pod_photo ? { ...entry, pod_photo: photos.url(baseUrl, entry.pod_photo) } : entry));

/** The scenario whose magic AWB this is, if any. */
export function magicScenario(fixtures: Fixtures, awb: string): LoadedScenario | undefined {
  for (const scenario of fixtures.scenarios.values()) if (scenario.magic_awb === awb) return scenario;
  return undefined;
}

/**
 * The complete history of a scenario for its magic AWB: a sample parcel from Jakarta
 * to Bandung whose journey began at midnight UTC seven days before `now`, so the
 * answer is the same all day long and every step has happened.
 */
export function magicHistory(fixtures: Fixtures, scenario: LoadedScenario, now: number): TrackingEntry[] {
  const start = Math.floor(now / DAY) * DAY - 7 * DAY;
  const order = {
    order_no: scenario.magic_awb,
    courier_code: 'jne',
    sender: { sender_name: 'Toko Contoh Sandbox', sender_addr_id: '317101' },
    item: { receiver_name: 'Budi Santoso', receiver_addr_id: '327301', receiver_address: 'Jl. Setiabudi No. 45' },
  } as Order;
  const context = contextOf(fixtures, order, 'magic');
  return scenario.steps.map((_, i) => renderStep(scenario, i, context, start + scenario.offsets[i]!, scenario.magic_awb)).reverse();
}
