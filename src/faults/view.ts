import type { FaultRule } from '../records/index.js';
import { CREDENTIAL_HEADERS, mask } from '../shared/index.js';

/**
 * A fault rule as the control API shows it: a credential it matches on (`Authorization:
 * Bearer <a token of the client>`, the natural way to fault one token) masked as the
 * banner masks tokens, so that a read_only token of the client cannot read a partner
 * token through the rules; one `unshown` (an admin token, in a rule an admin made for the
 * client) shows nothing of itself. Matching uses the stored rule, unchanged.
 */
export function faultRuleView(rule: FaultRule, unshown: (value: string) => boolean = () => false): FaultRule {
  const headers = rule.match.headers;
  if (headers === undefined || !Object.keys(headers).some((name) => CREDENTIAL_HEADERS.has(name.toLowerCase()))) return rule;
  const masked = (value: string): string => (unshown(value) ? '[an admin token]' : mask(value));
  const shown = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, CREDENTIAL_HEADERS.has(name.toLowerCase()) ? masked(value) : value]));
  return { ...rule, match: { ...rule.match, headers: shown } };
}
