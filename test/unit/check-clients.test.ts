import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkClientConfigs } from '../../src/config/check.js';
import { readConfigFile } from '../../src/config/file.js';
import { tempDir } from '../support/tmp.js';
import { buildServices } from '../../src/app/sandbox.js';

const known = { scenarios: ['delivered', 'returned'], couriers: ['jne', 'jnt'] };

describe('checkClientConfigs', () => {
  it('accepts good settings', () => {
    expect(() => checkClientConfigs([{ token: 't', scenario: 'returned', awb_delay: '2s-5s', couriers: ['jne'], read_only: true }], known)).not.toThrow();
  });

  it.each([
    [{ token: 't', scenario: 'teleported' }, 'clients[0].scenario: unknown scenario "teleported"'],
    [{ token: 't', awb_delay: 'soon' }, 'clients[0].awb_delay'],
    [{ token: 't', couriers: ['dhl'] }, 'clients[0].couriers: unknown courier "dhl"'],
    [{ token: 't', read_only: 'yes' }, 'clients[0].read_only'],
  ])('names the field of %j', (client, message) => {
    expect(() => checkClientConfigs([client as never], known)).toThrow(message);
  });
});

describe('createSandbox with bad client settings', () => {
  it('refuses to start, naming the client and the field', async () => {
    await expect(buildServices({ clients: [{ token: 'a' }, { token: 'b', scenario: 'nope' }] })).rejects.toThrow('clients[1].scenario');
  });
});

describe('a YAML config file', () => {
  const dir = tempDir();
  const configWith = (awbDelay: string) => {
    const path = join(dir(), 'sandbox.yaml');
    writeFileSync(path, `clients:\n  - token: yaml-token\n    awb_delay: ${awbDelay}\n`);
    return readConfigFile(path).clients!;
  };

  it('takes awb_delay: 0 (a YAML number) as no delay, as it takes "0"', () => {
    const clients = configWith('0');
    expect(clients[0]!.awb_delay).toBe('0');
    expect(() => checkClientConfigs(clients, known)).not.toThrow();
    expect(configWith('"0"')[0]!.awb_delay).toBe('0');
  });

  it('refuses another number, asking for its unit', () => {
    expect(() => checkClientConfigs(configWith('5'), known)).toThrow('clients[0].awb_delay: 5 has no unit; write "5ms" or "5s" (quoted in YAML)');
  });

  it('refuses a number without a unit written as text too (a JSON file writes every delay so), alone or in a range', () => {
    expect(() => checkClientConfigs(configWith('"5"'), known)).toThrow('clients[0].awb_delay: 5 has no unit; write "5ms" or "5s"');
    expect(() => checkClientConfigs(configWith('"2s-10"'), known)).toThrow('clients[0].awb_delay: 10 has no unit');
    expect(() => checkClientConfigs(configWith('"2s-10s"'), known)).not.toThrow();
  });
});
