import type { ChaosMode } from '../records/index.js';

/** Every chaos mode, as the header and the config name them. */
export const CHAOS_MODES: readonly ChaosMode[] = ['duplicate', 'late', 'out_of_order', 'bad_signature'];
/** How long `late` holds the first attempt back (sandbox time). */
export const LATE_MS = 10 * 60_000;
/** How long `out_of_order` collects a client's events before sending them newest first. */
export const OUT_OF_ORDER_WINDOW_MS = 60_000;

/** The entries of a list that are not chaos modes. */
export function unknownChaos(list: readonly string[]): string[] {
  return list.filter((mode) => !(CHAOS_MODES as readonly string[]).includes(mode));
}

/** The chaos modes of a delivery: those of the client's endpoint and of the order, once each, in catalogue order. */
export function chaosOf(...lists: Array<readonly string[] | undefined>): ChaosMode[] {
  // Looked up in each list rather than gathered into a set: an endpoint and an order name a few modes at most, mostly none.
  const chaos: ChaosMode[] = [];
  // Loops rather than lists.some(callback): no function made per mode (twice per event: the endpoint's and the delivery's).
  for (const mode of CHAOS_MODES) {
    for (const list of lists) {
      if (Array.isArray(list) && list.includes(mode)) {
        chaos.push(mode);
        break;
      }
    }
  }
  return chaos;
}

/**
 * Holds `out_of_order` deliveries: the first event of a client opens a window of one
 * minute; every event in it is due at the window's end minus 1 ms per earlier event,
 * so they go out together, newest first.
 */
export class ReorderWindows {
  private readonly windows = new Map<string, { end: number; count: number }>();

  dueAt(clientId: string, at: number): number {
    let window = this.windows.get(clientId);
    if (!window || at >= window.end - window.count) {
      window = { end: at + OUT_OF_ORDER_WINDOW_MS, count: 0 };
      this.windows.set(clientId, window);
    }
    const due = window.end - Math.min(window.count, OUT_OF_ORDER_WINDOW_MS - 1);
    window.count += 1;
    return due;
  }

  forget(clientId: string): void {
    this.windows.delete(clientId);
  }
}

/** The modes named by an `X-Sandbox-Webhook-Chaos` header (comma-separated), or undefined without one. */
export const chaosHeaderModes = (value: string | string[] | undefined): string[] | undefined =>
  value === undefined ? undefined : String(value).split(',').map((s) => s.trim()).filter(Boolean);
