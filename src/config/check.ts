import { ROLES, roleOf, type ClientConfig } from '../clients/index.js';
import { parseDelayRange, unitlessNumber } from '../shared/index.js';
import { checkConfiguredUrl } from '../webhooks/index.js';

/** The settings of a client entry, and of its `webhook`: a key outside them is a typo that would be dropped without a word. */
const CLIENT_KEYS: ReadonlyArray<keyof ClientConfig> = ['token', 'id', 'name', 'couriers', 'role', 'read_only', 'scenario', 'awb_delay', 'webhook'];
/** The keys of a client entry that an admin token's entry has no use for. */
const ADMIN_IGNORES: ReadonlyArray<keyof ClientConfig> = ['id', 'couriers', 'scenario', 'awb_delay', 'webhook'];
const WEBHOOK_KEYS = ['url', 'secret', 'chaos'];

/** A client's id: 1 to 128 characters, none a control character (C0, DEL or C1), no space at either end. */
const CLIENT_ID = /^(?!\s)[^\p{Cc}]{1,128}(?<!\s)$/u;
/** An id every HTTP client can name: `X-Sandbox-Client` is a header, and some clients send a header's value only in Latin-1 or ASCII. */
const NAMEABLE_ID = /^[\x20-\x7e]+$/;

/** A problem per key of `value` outside `known`, each named at `at`. */
function unknownKeys(value: object, known: readonly string[], at: string): string[] {
  return Object.keys(value)
    .filter((key) => !known.includes(key))
    .map((key) => `${at}.${key}: is not a known setting; the settings are ${known.join(', ')}`);
}

/**
 * Checks per-client settings at start, so a mistake in the config file stops the
 * start with a message naming `clients[i].field` instead of surfacing later as a
 * puzzling 400 on someone's create request. Answers the warnings: what starts and works
 * for the client's own tokens but not for everyone.
 */
export function checkClientConfigs(clients: ClientConfig[], known: { scenarios: string[]; couriers: string[] }, file?: string): string[] {
  const problems: string[] = [];
  const warnings: string[] = [];
  const unnameable = new Set<string>();
  clients.forEach((client, i) => {
    const at = `clients[${i}]`;
    problems.push(...unknownKeys(client, CLIENT_KEYS, at));
    // An id is a key of the data file and the value of X-Sandbox-Client: text that reads back the same. Left empty, it is none (derived from the token).
    const id: unknown = client.id;
    if (id === null || id === '') delete (client as { id?: unknown }).id;
    else if (id !== undefined && !(typeof id === 'string' && CLIENT_ID.test(id))) {
      const quote = typeof id === 'number' || typeof id === 'boolean' ? '; quote it in YAML (id: "..."), so that it stays the text you wrote' : '';
      problems.push(`${at}.id: must be text of 1 to 128 characters, none a control character, no space at either end${quote}`);
    } else if (typeof id === 'string' && !NAMEABLE_ID.test(id) && !unnameable.has(id)) {
      unnameable.add(id);
      warnings.push(`${at}.id: "${id}" is not printable ASCII: the client's own tokens work, and an admin acts for it with X-Sandbox-Client in UTF-8 (as curl, the dashboard and --client send it), but an admin may not be able to act for it from every HTTP client (some send a header's value only in Latin-1, as Python's http.client does); give it an ASCII id before its records grow, as its records belong to the id`);
    }
    const { webhook } = client as { webhook?: unknown };
    // An empty `webhook:` (its lines commented out) is none.
    if (webhook === null) delete (client as { webhook?: unknown }).webhook;
    else if (webhook !== undefined) {
      if (typeof webhook !== 'object' || Array.isArray(webhook)) problems.push(`${at}.webhook: must be an object with url, secret and chaos`);
      else {
        problems.push(...unknownKeys(webhook, WEBHOOK_KEYS, `${at}.webhook`));
        const settings = webhook as Record<string, unknown>;
        for (const key of WEBHOOK_KEYS) if (settings[key] === null) delete settings[key]; // `secret:` left empty is none
        if (settings.url === '') delete settings.url; // `url: ""`, as a template leaves it, is none too
        for (const key of ['url', 'secret']) if (settings[key] !== undefined && typeof settings[key] !== 'string') problems.push(`${at}.webhook.${key}: must be text`);
        const url = typeof settings.url === 'string' ? checkConfiguredUrl(settings.url) : undefined;
        if (url) problems.push(`${at}.webhook.url: ${url.message}`);
        const { chaos } = settings;
        if (chaos !== undefined && !(Array.isArray(chaos) && chaos.every((mode) => typeof mode === 'string'))) problems.push(`${at}.webhook.chaos: must be a list of chaos modes, e.g. [duplicate]`);
      }
    }
    if (client.scenario !== undefined && !known.scenarios.includes(client.scenario)) {
      problems.push(`${at}.scenario: unknown scenario "${client.scenario}"; use one of ${known.scenarios.join(', ')}`);
    }
    const bare = typeof client.awb_delay === 'string' ? unitlessNumber(client.awb_delay) : undefined;
    if (typeof client.awb_delay === 'number' || bare !== undefined) {
      const n = bare ?? String(client.awb_delay);
      problems.push(`${at}.awb_delay: ${n} has no unit; write "${n}ms" or "${n}s" (quoted in YAML), or a range such as 2s-10s`);
    } else if (client.awb_delay !== undefined && (typeof client.awb_delay !== 'string' || !parseDelayRange(client.awb_delay))) {
      problems.push(`${at}.awb_delay: "${String(client.awb_delay)}" is not a delay; use 0, 500ms, 3s or a range such as 2s-10s`);
    }
    if (client.couriers !== undefined) {
      if (!Array.isArray(client.couriers)) problems.push(`${at}.couriers: must be a list of courier codes`);
      else for (const code of client.couriers) if (!known.couriers.includes(code)) problems.push(`${at}.couriers: unknown courier "${String(code)}"; use ${known.couriers.join(', ')}`);
      if (Array.isArray(client.couriers) && client.couriers.length === 0 && roleOf(client) === 'partner') warnings.push(`${at}.couriers: an empty list enables no courier: every create of this token answers 403 (leave couriers out for every courier)`);
    }
    // An admin token acts for the client X-Sandbox-Client names: a client's settings on its entry reach no client.
    const ignored = roleOf(client) === 'admin' ? ADMIN_IGNORES.filter((key) => client[key] !== undefined && client[key] !== null) : [];
    if (ignored.length > 0) warnings.push(`${at}: ${ignored.join(', ')} ${ignored.length === 1 ? 'does' : 'do'} nothing on an admin token (it acts for the client X-Sandbox-Client names, with that client's settings): remove ${ignored.length === 1 ? 'it' : 'them'}, or give them to a partner token`);
    if (client.read_only !== undefined && typeof client.read_only !== 'boolean') problems.push(`${at}.read_only: must be true or false`);
    if (client.role !== undefined && !ROLES.includes(client.role)) problems.push(`${at}.role: "${String(client.role)}" is not a role; use ${ROLES.join(', ')}`);
    if (client.role !== undefined && client.role !== 'read_only' && client.read_only === true) {
      problems.push(`${at}.read_only: true contradicts role "${client.role}"; keep one of them`);
    }
  });
  const entries = file ? ` (clients[i]: the entries of ${file}, in order)` : '';
  if (problems.length > 0) throw new Error(`The client settings${entries} are not valid:\n  ${problems.join('\n  ')}`);
  return warnings.map((warning) => `${warning}${entries}`);
}

/**
 * The warning for a sandbox several partners share (two clients or more, or an admin
 * token) whose webhook URLs may point anywhere (`--webhook-targets any`, the CLI's default
 * for a laptop): a partner could make it call hosts of the network it runs in. Undefined
 * otherwise.
 */
export function openTargetsShared(policy: { kind: string }, clients: number, admins: number): string | undefined {
  if (policy.kind !== 'any' || (clients < 2 && admins === 0)) return undefined;
  const who = admins > 0 ? `${clients} ${clients === 1 ? 'client' : 'clients'} and an admin token` : `${clients} clients`;
  return (
    `this sandbox serves ${who}, and webhook URLs set through the API may point anywhere (--webhook-targets any, the default outside the image): ` +
    'a partner can make it call hosts of the network it runs in. For a shared deployment set --webhook-targets public (SANDBOX_WEBHOOK_TARGETS=public, as the image does)'
  );
}
