import type { FaultRule } from '../records/index.js';
import { carriesSecret, CREDENTIAL_HEADERS, mask, secretsShown } from '../shared/index.js';

/**
 * A fault rule as the control API shows it: a credential it matches on (`Authorization:
 * Bearer <a token of the client>`, the natural way to fault one token) masked as the
 * banner masks tokens, so that a read_only token of the client cannot read a partner
 * token through the rules; one `unshown` (an admin token, in a rule an admin made for the
 * client) shows nothing of itself. So is any criterion whose value carries one of `secrets`
 * (the client's tokens, see ClientRegistry.secretsOf), whatever its header, and a path,
 * body criterion or action field that carries one. Matching uses the stored rule, unchanged.
 */
export function faultRuleView(rule: FaultRule, unshown: (value: string) => boolean = () => false, secrets: readonly string[] = []): FaultRule {
  const withHeaders = headersShown(rule, unshown, secrets);
  if (secrets.length === 0) return withHeaders;
  const { match, action } = withHeaders;
  const body = match.body === undefined ? undefined : (secretsShown(match.body, secrets, mask) as Record<string, unknown>);
  const shownAction = { ...action } as Record<string, unknown>;
  for (const field of ['body', 'headers'] as const) if (field in shownAction) shownAction[field] = secretsShown(shownAction[field], secrets, mask);
  return {
    ...withHeaders,
    match: { ...match, ...(match.path === undefined ? {} : { path: secretsShown(match.path, secrets, mask) as string }), ...(body === undefined ? {} : { body }) },
    action: shownAction as unknown as FaultRule['action'],
  };
}

/** The rule with its header criteria shown as faultRuleView says. */
function headersShown(rule: FaultRule, unshown: (value: string) => boolean, secrets: readonly string[]): FaultRule {
  const headers = rule.match.headers;
  const secret = (name: string, value: string): boolean => CREDENTIAL_HEADERS.has(name.toLowerCase()) || carriesSecret(value, secrets);
  if (headers === undefined || !Object.entries(headers).some(([name, value]) => secret(name, value))) return rule;
  // `unshown` asked of Authorization only, where a partner's rule cannot name an admin token: elsewhere its answer would tell a guess is one.
  const masked = (name: string, value: string): string => (name.toLowerCase() === 'authorization' && unshown(value) ? '[an admin token]' : mask(value));
  const shown = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, secret(name, value) ? masked(name, value) : value]));
  return { ...rule, match: { ...rule.match, headers: shown } };
}
