import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { ClientConfig } from '../clients/index.js';

/** The `--config` file: per-client settings. JSON or YAML. */
export interface ConfigFile {
  clients?: ClientConfig[];
}

/** Reads the config file; throws a message naming the file and the problem. */
export function readConfigFile(path: string): ConfigFile {
  let parsed: unknown;
  try {
    // Merge keys (`<<: *defaults`) are how a YAML file shares settings between clients.
    parsed = parse(readFileSync(path, 'utf8'), { merge: true });
  } catch (error) {
    throw new Error(`Cannot read the config file ${path}: ${(error as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error(`The config file ${path} must hold an object with "clients".`);
  // Keys starting with x- are the file's own (anchors for its clients to share, as in a compose file).
  const unknown = Object.keys(parsed).filter((key) => key !== 'clients' && !key.startsWith('x-'));
  if (unknown.length > 0) throw new Error(`The config file ${path} holds ${unknown.map((key) => `"${key}"`).join(', ')}, which is not a known setting: the file holds "clients", a list of clients (and keys of its own starting with x-).`);
  const clients = (parsed as ConfigFile).clients ?? [];
  if (!Array.isArray(clients)) throw new Error(`"clients" in ${path} must be a list.`);
  clients.forEach((c, i) => {
    // YAML reads a token of digits (or true, 1e5, ...) as another type: its text may have changed on the way (precision), so it is not taken.
    if (c?.token !== undefined && c.token !== null && typeof c.token !== 'string') throw new Error(`clients[${i}].token in ${path} is not text (YAML read it as a ${typeof c.token}): quote it, token: "..."`);
    if (typeof c?.token !== 'string' || c.token === '') throw new Error(`clients[${i}] in ${path} needs a "token".`);
    // YAML reads `awb_delay: 0` as a number; zero needs no unit, so it is the delay "0".
    if ((c.awb_delay as unknown) === 0) c.awb_delay = '0';
  });
  return { clients };
}
