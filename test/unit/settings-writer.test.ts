import { describe, expect, it } from 'vitest';
import { Conflict } from '../../src/shared/errors.js';
import { SETTINGS_ATTEMPTS, SettingsWriter } from '../../src/store/settings-writer.js';
import type { Repositories, Storage } from '../../src/store/port.js';

/** A store whose first `conflicts` units fail with a Conflict, as a write that met another replica's does on PostgreSQL. */
function storeMeeting(conflicts: number): Pick<Storage, 'transaction'> & { units: number } {
  const store = {
    units: 0,
    async transaction<T>(fn: (tx: Repositories) => Promise<T>): Promise<T> {
      store.units += 1;
      const result = await fn({} as Repositories);
      if (store.units <= conflicts) throw new Conflict('The settings of client a was changed by another request meanwhile.');
      return result;
    },
  };
  return store;
}

describe('SettingsWriter.unit', () => {
  it('runs a unit that met another change again, whole, until it commits', async () => {
    const store = storeMeeting(2);
    let runs = 0;
    expect(await new SettingsWriter(store).unit('a', async () => ++runs)).toBe(3);
    expect(store.units).toBe(3);
  });

  it(`gives up with the Conflict after ${SETTINGS_ATTEMPTS} tries`, async () => {
    const store = storeMeeting(Infinity);
    await expect(new SettingsWriter(store).unit('a', async () => undefined)).rejects.toBeInstanceOf(Conflict);
    expect(store.units).toBe(SETTINGS_ATTEMPTS);
  });

  it('does not try again a unit that failed otherwise', async () => {
    const store = storeMeeting(0);
    await expect(new SettingsWriter(store).unit('a', () => Promise.reject(new Error('disk full')))).rejects.toThrow('disk full');
    expect(store.units).toBe(1);
  });

  it("runs one client's units one at a time, in the order they came, and other clients' beside them", async () => {
    const writer = new SettingsWriter(storeMeeting(0));
    const log: string[] = [];
    const unit = (name: string) => async () => {
      log.push(`${name} starts`);
      await new Promise((resolve) => setTimeout(resolve, 5));
      log.push(`${name} ends`);
    };
    await Promise.all([writer.unit('a', unit('a1')), writer.unit('a', unit('a2')), writer.unit('b', unit('b1'))]);
    expect(log.indexOf('a2 starts')).toBeGreaterThan(log.indexOf('a1 ends'));
    expect(log.indexOf('b1 starts')).toBeLessThan(log.indexOf('a1 ends'));
  });
});
