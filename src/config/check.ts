import { ROLES, type ClientConfig } from '../clients/index.js';
import { parseDelayRange, unitlessNumber } from '../shared/index.js';

/**
 * Checks per-client settings at start, so a mistake in the config file stops the
 * start with a message naming `clients[i].field` instead of surfacing later as a
 * puzzling 400 on someone's create request.
 */
export function checkClientConfigs(clients: ClientConfig[], known: { scenarios: string[]; couriers: string[] }): void {
  const problems: string[] = [];
  clients.forEach((client, i) => {
    const at = `clients[${i}]`;
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
    }
    if (client.read_only !== undefined && typeof client.read_only !== 'boolean') problems.push(`${at}.read_only: must be true or false`);
    if (client.role !== undefined && !ROLES.includes(client.role)) problems.push(`${at}.role: "${String(client.role)}" is not a role; use ${ROLES.join(', ')}`);
    if (client.role !== undefined && client.role !== 'read_only' && client.read_only === true) {
      problems.push(`${at}.read_only: true contradicts role "${client.role}"; keep one of them`);
    }
  });
  if (problems.length > 0) throw new Error(`The client settings are not valid:\n  ${problems.join('\n  ')}`);
}
