import { carriesSecret, decodedPath, NotFound, RuleViolation, secretFieldOf, TOKEN_IN_VALUE_MIN } from '../../shared/index.js';
import { clientOf, json, type HandlerMap } from '../handler.js';
import { faultMessages, faultRuleView, checkRule, type BodyLimit } from '../../faults/index.js';
import type { FaultRules } from '../../faults/index.js';
import type { FaultRule, FaultRuleInput } from '../../records/index.js';
import type { MatchableOperation } from '../../shared/index.js';
import type { ClientRegistry } from '../../clients/index.js';

/**
 * A rule's `Authorization` criterion names a token whose requests are the client's: one of
 * its own, or, in a rule an admin makes, an admin's. Any other value (another client's
 * token, an admin's in a partner's rule, a typo) is refused the same way, so the answer
 * tells a caller nothing of tokens not its client's.
 */
function checkCredential(registry: ClientRegistry, clientId: string, byAdmin: boolean, rule: FaultRuleInput): FaultRuleInput {
  if (byAdmin) refuseAdminTokens(registry, rule);
  for (const [name, value] of Object.entries(rule.match?.headers ?? {})) {
    if (name.toLowerCase() !== 'authorization') continue;
    const caller = callerNamed(registry, value);
    if (caller !== undefined && (caller.role === 'admin' ? byAdmin : caller.client.id === clientId)) continue;
    throw new RuleViolation([{ field: `match.headers.${name}`, message: faultMessages.foreignCredential }], faultMessages.invalidRule);
  }
  return rule;
}

/**
 * An admin's rule naming an admin token in its path, a header's name or value (but
 * Authorization's), its body criteria or its answer: a `400`, since the client's tokens read
 * the rule (its view masks only the client's own tokens there). Only an admin's rule is asked:
 * a partner's answer would tell it that its guess is one.
 */
function refuseAdminTokens(registry: ClientRegistry, rule: FaultRuleInput): void {
  const tokens = registry.adminTokens.filter((token) => token.length >= TOKEN_IN_VALUE_MIN);
  const refuse = (field: string): never => {
    throw new RuleViolation([{ field, message: faultMessages.adminTokenShown }], faultMessages.invalidRule);
  };
  const path = rule.match?.path;
  // As a request's path would carry it: percent-encoded too.
  for (const shown of path === undefined ? [] : [path, decodedPath(path)]) if (carriesSecret(shown, tokens)) refuse('match.path');
  for (const [name, value] of Object.entries(rule.match?.headers ?? {})) {
    // A header name in any case (a request's are read in lower case); a value but Authorization's, which names whose requests the rule matches.
    if (tokens.some((token) => name.toLowerCase().includes(token.toLowerCase()))) refuse(`match.headers.${name}`);
    if (name.toLowerCase() !== 'authorization' && carriesSecret(value, tokens)) refuse(`match.headers.${name}`);
  }
  for (const [value, field] of [[rule.match?.body, 'match.body'], [rule.action, 'action']] as const) {
    const found = secretFieldOf(value, tokens, field);
    if (found !== undefined) refuse(found);
  }
}

/** Whose token an `Authorization` value (`Bearer <token>`) names, if any. */
const callerNamed = (registry: ClientRegistry, value: string) => {
  const token = /^Bearer +(\S+)$/i.exec(value)?.[1];
  return token === undefined ? undefined : registry.callerOf(token);
};

/** `/__sandbox/faults`: create, list and delete the calling client's fault rules (a rule's match checked against the served spec's `operations`, the body limit and the client's tokens). */
export function faultHandlers(rules: FaultRules, registry: ClientRegistry, operations: readonly MatchableOperation[], limits?: BodyLimit): HandlerMap {
  // A partner's view of a rule an admin made for it shows nothing of the admin token it names.
  const adminToken = (value: string): boolean => callerNamed(registry, value)?.role === 'admin';
  // The client's tokens are masked in any criterion; not the admins' by what they hold, which would tell a partner's guess is one.
  const view = (clientId: string) => (rule: FaultRule) => faultRuleView(rule, adminToken, registry.secretsOf(clientId, 'partner'));
  return {
    createFaultRule: async (input) => {
      const clientId = clientOf(input).id;
      return json(201, view(clientId)(await rules.add(clientId, checkCredential(registry, clientId, input.role === 'admin', checkRule(input.body as FaultRuleInput, operations, limits)))));
    },
    listFaultRules: async (input) => json(200, { rules: (await rules.list(clientOf(input).id)).map(view(clientOf(input).id)) }),
    deleteFaultRules: async (input) => json(200, { success: true, removed: await rules.clear(clientOf(input).id) }),
    deleteFaultRule: async (input) => {
      const id = input.params.id!;
      if (!(await rules.remove(clientOf(input).id, id))) throw new NotFound(faultMessages.ruleNotFound(id));
      return json(200, { success: true, removed: 1 });
    },
  };
}
