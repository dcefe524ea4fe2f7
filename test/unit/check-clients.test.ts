import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkClientConfigs } from '../../src/config/check.js';
import { readConfigFile } from '../../src/config/file.js';
import { tempDir } from '../support/tmp.js';
import { buildServices } from '../../src/app/sandbox.js';

const known = { scenarios: ['delivered', 'returned'], couriers: ['jne', 'jnt'] };

describe('checkClientConfigs', () => {
  it('takes an empty webhook url as none', () => {
    const clients = [{ token: 't', webhook: { url: '' } }];
    expect(() => checkClientConfigs(clients, known)).not.toThrow();
    expect(clients[0]!.webhook).toEqual({});
  });

  it('accepts good settings', () => {
    expect(() => checkClientConfigs([{ token: 't', scenario: 'returned', awb_delay: '2s-5s', couriers: ['jne'], read_only: true }], known)).not.toThrow();
  });

  it.each([
    [{ token: 't', scenario: 'teleported' }, 'clients[0].scenario: unknown scenario "teleported"'],
    [{ token: 't', awb_delay: 'soon' }, 'clients[0].awb_delay'],
    [{ token: 't', couriers: ['dhl'] }, 'clients[0].couriers: unknown courier "dhl"'],
    [{ token: 't', read_only: 'yes' }, 'clients[0].read_only'],
    [{ token: 't', webhook: { url: 'notaurl' } }, 'clients[0].webhook.url: is not an absolute http(s) URL'],
    [{ token: 't', webhook: { url: 'http://user:pw@partner.test/h' } }, 'clients[0].webhook.url: carries credentials'],
  ])('names the field of %j', (client, message) => {
    expect(() => checkClientConfigs([client as never], known)).toThrow(message);
  });

  it('starts a client whose id is not ASCII, warning that an admin may not name it in X-Sandbox-Client from every HTTP client', () => {
    const warnings = checkClientConfigs([{ token: 't1', id: 'partner-a' }, { token: 't2', id: 'café' }, { token: 't3', id: 'café', role: 'read_only' }], known, 'clients.yaml');
    expect(warnings).toEqual([expect.stringMatching(/^clients\[1\]\.id: "café" is not printable ASCII: .*X-Sandbox-Client in UTF-8.*an admin may not be able to act for it from every HTTP client.*clients\.yaml/)]);
  });

  it('warns that an empty couriers list enables no courier (every create of the token a 403)', () => {
    expect(checkClientConfigs([{ token: 't1', couriers: [] }], known, 'clients.yaml')).toEqual([
      'clients[0].couriers: an empty list enables no courier: every create of this token answers 403 (leave couriers out for every courier) (clients[i]: the entries of clients.yaml, in order)',
    ]);
    // A token that creates nothing anyway (read_only, however it is written) has nothing to lose by it.
    expect(checkClientConfigs([{ token: 't1', id: 'a', role: 'read_only', couriers: [] }, { token: 't2', id: 'a', read_only: true, couriers: [] }, { token: 't3', id: 'a', role: 'partner', couriers: [] }], known)).toEqual([
      expect.stringMatching(/^clients\[2\]\.couriers: an empty list enables no courier/),
    ]);
  });

  it("warns of a client's settings on an admin token's entry, which reach no client", () => {
    expect(checkClientConfigs([{ token: 't1', role: 'admin', id: 'ops', couriers: ['jne'] }, { token: 't2', role: 'admin', name: 'Operations' }], known)).toEqual([
      'clients[0]: id, couriers do nothing on an admin token (it acts for the client X-Sandbox-Client names, with that client\'s settings): remove them, or give them to a partner token',
    ]);
  });

  it('warns of nothing for ASCII ids and ids derived from the token', () => {
    expect(checkClientConfigs([{ token: 't1', id: 'Partner A (staging) #2' }, { token: 't2' }], known)).toEqual([]);
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

describe('a config file with a misspelt key', () => {
  const dir = tempDir();
  const fileWith = (yaml: string) => {
    const path = join(dir(), 'sandbox.yaml');
    writeFileSync(path, yaml);
    return path;
  };

  it('refuses a misspelt "clients", which would drop every client of the file', () => {
    const path = fileWith('client:\n  - token: t1\n    id: a\n');
    expect(() => readConfigFile(path)).toThrow(`The config file ${path} holds "client", which is not a known setting: the file holds "clients", a list of clients (and keys of its own starting with x-).`);
  });

  it.each([['12345678901234567', 'number'], ['true', 'boolean']])('refuses a token YAML reads as no text (%s), saying to quote it, not that it is missing', (token, type) => {
    const path = fileWith(`clients:\n  - token: ${token}\n    id: a\n`);
    expect(() => readConfigFile(path)).toThrow(`clients[0].token in ${path} is not text (YAML read it as a ${type}): quote it, token: "..."`);
    expect(readConfigFile(fileWith(`clients:\n  - token: "${token}"\n    id: a\n`)).clients![0]!.token).toBe(token);
  });

  it.each([
    ['    webhok: { url: "http://x.test" }\n', 'clients[0].webhok: is not a known setting; the settings are token, id, name, couriers, role, read_only, scenario, awb_delay, webhook'],
    ['    senario: stuck\n', 'clients[0].senario: is not a known setting'],
    ['    webhook: { url: "http://x.test", secrte: whsec_abc }\n', 'clients[0].webhook.secrte: is not a known setting; the settings are url, secret, chaos'],
    ['    webhook: "http://x.test"\n', 'clients[0].webhook: must be an object with url, secret and chaos'],
  ])('refuses to start with %j in a client, naming it', async (line, message) => {
    const path = fileWith(`clients:\n  - token: t1\n    id: a\n${line}`);
    expect(() => checkClientConfigs(readConfigFile(path).clients!, known)).toThrow(message);
    await expect(buildServices({ config: path })).rejects.toThrow(message);
  });

  const NOT_AN_ID = 'clients[0].id: must be text of 1 to 128 characters, none a control character, no space at either end';
  it.each([
    ['123', `${NOT_AN_ID}; quote it in YAML (id: "..."), so that it stays the text you wrote`],
    ['true', `${NOT_AN_ID}; quote it in YAML (id: "..."), so that it stays the text you wrote`],
    ['0x1F', `${NOT_AN_ID}; quote it in YAML (id: "..."), so that it stays the text you wrote`],
    ['" acme"', NOT_AN_ID],
    ['"a\\nb"', NOT_AN_ID],
    ['"a\\u0085b"', NOT_AN_ID],
    ['[x]', NOT_AN_ID],
  ])('refuses to start on a client id that is no text an admin could name (id: %s), naming it and the file, before anything is stored', async (id, message) => {
    const path = fileWith(`clients:\n  - token: t1abcdefgh\n    id: ${id}\n`);
    await expect(buildServices({ config: path })).rejects.toThrow(message);
    await expect(buildServices({ config: path })).rejects.toThrow(`The client settings (clients[i]: the entries of ${path}, in order) are not valid`);
  });

  it('takes ids of any text that reads back the same (spaces inside, 128 characters of any script), names of any kind, and an id left empty as none', () => {
    expect(() => checkClientConfigs([{ token: 't1', id: 'Acme Corp', name: 'Acme, Inc. (staging)' }, { token: 't2', id: '123' }, { token: 't3', id: '😀'.repeat(128) }], known)).not.toThrow();
    expect(() => checkClientConfigs([{ token: 't1', id: 'a', name: 2024 as never }, { token: 't2', id: 'b', name: '' }], known)).not.toThrow();
    const empty = [{ token: 't1', id: null as never }, { token: 't2', id: '' }];
    checkClientConfigs(empty, known);
    expect(empty.map((c) => 'id' in c)).toEqual([false, false]);
  });

  it.each([
    ['    webhook: { url: "http://x.test", chaos: "bad_signature" }\n', 'clients[0].webhook.chaos: must be a list of chaos modes, e.g. [duplicate]'],
    ['    webhook: { url: 42 }\n', 'clients[0].webhook.url: must be text'],
  ])('refuses a webhook setting of the wrong kind (%j), naming it, not with a TypeError', async (line, message) => {
    const path = fileWith(`clients:\n  - token: t1\n    id: a\n${line}`);
    await expect(buildServices({ config: path })).rejects.toThrow(message);
  });

  it('takes an empty webhook or chaos (lines commented out) as none, keys of its own starting with x-, and YAML merge keys', async () => {
    const path = fileWith('x-defaults: &defaults\n  scenario: returned\n  couriers: [jne]\nclients:\n  - token: t1\n    id: a\n    <<: *defaults\n    webhook:\n  - token: t2\n    id: b\n    webhook: { url: "https://b.example/hooks", chaos: }\n');
    const clients = readConfigFile(path).clients!;
    expect(clients[0]).toMatchObject({ token: 't1', scenario: 'returned', couriers: ['jne'] });
    expect(() => checkClientConfigs(clients, known)).not.toThrow();
    const services = await buildServices({ config: path, data: ':memory:' });
    await services.storage.close();
  });

  it('takes every documented setting', () => {
    const path = fileWith('clients:\n  - token: t1\n    id: a\n    name: Acme\n    couriers: [jne]\n    role: partner\n    scenario: returned\n    awb_delay: 2s\n    webhook: { url: "https://acme.example/hooks", secret: whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw, chaos: [duplicate] }\n  - token: t2\n    read_only: true\n');
    expect(() => checkClientConfigs(readConfigFile(path).clients!, known)).not.toThrow();
  });
});
