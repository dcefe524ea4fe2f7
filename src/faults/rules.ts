import type { Clocks } from '../clock/index.js';
import { LimitReached, RuleViolation } from '../shared/index.js';
import type { SettingsWriter, Storage } from '../store/index.js';
import type { OperationInput } from '../requests/index.js';
import { draw } from '../ids/index.js';
import { matches } from './match.js';
import { faultMessages } from './messages.js';
import type { FaultRule, FaultRuleInput } from '../records/index.js';

/** The most fault rules a client may have at once: each request of the client is matched against all of them. */
export const MAX_FAULT_RULES = 100;
/** The largest rule, as JSON. */
export const MAX_FAULT_RULE_BYTES = 16_384;
/**
 * The most bytes of JSON a client's rules hold together: a request that a rule applies
 * to rewrites the client's rules (their counters), so this bounds the write one request
 * can cause (100 rules of 16 KiB would make it 1.6 MB).
 */
export const MAX_FAULT_RULES_BYTES = 65_536;

/**
 * Whether a rule names a token (an `Authorization` criterion): the only rules a read_only
 * token's requests meet. An observer's reads (a dashboard, a monitor) are not the client's
 * test traffic, and must not spend the rules the partner set up for its client.
 */
const namesCredential = (rule: FaultRule): boolean => Object.keys(rule.match.headers ?? {}).some((name) => name.toLowerCase() === 'authorization');

/**
 * The fault rules of every client, kept in its settings. Rules are tried in the order
 * they were created; the first that matches and wins its draw applies, and expires
 * once it has applied `times` times. Every change, a request's count included, goes
 * through the settings writer, so requests that match a rule at once take their turns at
 * the client's settings row instead of meeting there (a Conflict, answered 409).
 */
export class FaultRules {
  constructor(
    private readonly storage: Storage,
    private readonly settings: SettingsWriter,
    private readonly clock: Clocks,
    private readonly seed: string | undefined,
  ) {}

  async add(clientId: string, input: FaultRuleInput): Promise<FaultRule> {
    return this.settings.change(clientId, (settings) => {
      if (settings.faults.length >= MAX_FAULT_RULES) throw new LimitReached(faultMessages.tooManyRules(MAX_FAULT_RULES));
      const bytes = Buffer.byteLength(JSON.stringify(input));
      if (bytes > MAX_FAULT_RULE_BYTES) throw new RuleViolation([{ field: 'body', message: faultMessages.ruleTooLarge(MAX_FAULT_RULE_BYTES) }]);
      if (Buffer.byteLength(JSON.stringify(settings.faults)) + bytes > MAX_FAULT_RULES_BYTES) throw new LimitReached(faultMessages.rulesTooLarge(MAX_FAULT_RULES_BYTES));
      const times = input.times ?? 1;
      const seq = settings.fault_seq + 1;
      const rule: FaultRule = {
        id: `fault_${seq}`,
        match: input.match ?? {},
        action: input.action,
        times,
        remaining: times,
        probability: input.probability ?? 1,
        matched: 0,
        hits: 0,
        created_at: new Date(this.clock.of(clientId)).toISOString(),
      };
      return { settings: { ...settings, fault_seq: seq, faults: [...settings.faults, rule] }, result: rule };
    });
  }

  async list(clientId: string): Promise<readonly FaultRule[]> {
    return (await this.storage.settings.get(clientId))?.faults ?? [];
  }

  /** Removes one rule; false when the client has no such rule. */
  remove(clientId: string, id: string): Promise<boolean> {
    return this.settings.change(clientId, (settings) => {
      const faults = settings.faults.filter((r) => r.id !== id);
      return { settings: { ...settings, faults }, result: faults.length < settings.faults.length };
    });
  }

  /** Removes every rule of a client; returns how many. */
  clear(clientId: string): Promise<number> {
    return this.settings.change(clientId, (settings) => ({ settings: { ...settings, faults: [] }, result: settings.faults.length }));
  }

  /**
   * The rule that applies to this request, counted as applied (and expired when spent), or
   * undefined. `refused` says of the rule that won whether it cannot be applied now (a
   * client at its cap of held requests): it is then counted as matched only, neither
   * applied nor spent, and answered 'refused'.
   */
  async take(clientId: string, input: OperationInput, refused: (rule: FaultRule) => boolean = () => false): Promise<FaultRule | 'refused' | undefined> {
    const rules = await this.list(clientId);
    const meets = (rule: FaultRule): boolean => (input.role !== 'read_only' || namesCredential(rule)) && matches(rule.match, input);
    if (!rules.some(meets)) return undefined; // the usual case: no write
    return this.settings.change<FaultRule | 'refused' | undefined>(clientId, (settings) => {
      const faults = settings.faults.map((rule) => ({ ...rule }));
      for (const rule of faults) {
        if (!meets(rule)) continue;
        rule.matched++;
        if (rule.probability < 1 && this.chance(`fault:${rule.id}:${rule.matched}`) >= rule.probability) continue;
        if (refused(rule)) return { settings: { ...settings, faults }, result: 'refused' as const };
        rule.hits++;
        rule.remaining--;
        return { settings: { ...settings, faults: faults.filter((r) => r.remaining > 0) }, result: rule };
      }
      return { settings: { ...settings, faults }, result: undefined };
    });
  }

  /** A number in [0, 1): seeded by --seed and the key, so a seeded run draws the same each time. */
  chance(key: string): number {
    return this.seed === undefined ? Math.random() : draw(this.seed, key);
  }
}
