import type { Clock } from '../clock/clock.js';
import type { OperationInput } from '../http/handler.js';
import { draw } from '../ids/random.js';
import { matches } from './match.js';
import type { FaultRule, FaultRuleInput } from './types.js';

/**
 * The fault rules of every client, kept in memory (a restart clears them). Rules are
 * tried in the order they were created; the first that matches and wins its draw
 * applies, and expires once it has applied `times` times.
 */
export class FaultRules {
  private readonly byClient = new Map<string, FaultRule[]>();
  private nextId = 1;

  constructor(
    private readonly clock: Clock,
    private readonly seed: string | undefined,
  ) {}

  add(clientId: string, input: FaultRuleInput): FaultRule {
    const times = input.times ?? 1;
    const rule: FaultRule = {
      id: `fault_${this.nextId++}`,
      match: input.match ?? {},
      action: input.action,
      times,
      remaining: times,
      probability: input.probability ?? 1,
      matched: 0,
      hits: 0,
      created_at: new Date(this.clock.now()).toISOString(),
    };
    this.byClient.set(clientId, [...this.list(clientId), rule]);
    return rule;
  }

  list(clientId: string): FaultRule[] {
    return this.byClient.get(clientId) ?? [];
  }

  /** Removes one rule; false when the client has no such rule. */
  remove(clientId: string, id: string): boolean {
    const rules = this.list(clientId);
    const kept = rules.filter((r) => r.id !== id);
    this.byClient.set(clientId, kept);
    return kept.length < rules.length;
  }

  /** Removes every rule of a client; returns how many. */
  clear(clientId: string): number {
    const count = this.list(clientId).length;
    this.byClient.delete(clientId);
    return count;
  }

  /** The rule that applies to this request, counted as applied (and expired when spent), or undefined. */
  take(clientId: string, input: OperationInput): FaultRule | undefined {
    for (const rule of this.list(clientId)) {
      if (!matches(rule.match, input)) continue;
      rule.matched++;
      if (rule.probability < 1 && this.chance(`fault:${rule.id}:${rule.matched}`) >= rule.probability) continue;
      rule.hits++;
      rule.remaining--;
      if (rule.remaining <= 0) this.remove(clientId, rule.id);
      return rule;
    }
    return undefined;
  }

  /** A number in [0, 1): seeded by --seed and the key, so a seeded run draws the same each time. */
  chance(key: string): number {
    return this.seed === undefined ? Math.random() : draw(this.seed, key);
  }
}
