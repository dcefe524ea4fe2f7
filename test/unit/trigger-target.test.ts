import { describe, expect, it } from 'vitest';
import { loadFixtures } from '../../src/fixtures/load.js';
import { targetOfTrigger } from '../../src/states/trigger.js';
import { RuleViolation } from '../../src/shared/errors.js';

const fixtures = loadFixtures();
const target = (request: object, orderScenario?: string) => targetOfTrigger(fixtures, request, orderScenario, 'delivered');
const fieldOf = (request: object): string | undefined => {
  try {
    target(request);
  } catch (error) {
    return error instanceof RuleViolation ? error.errors[0]?.field : undefined;
  }
  return undefined;
};

describe('targetOfTrigger', () => {
  it.each([
    [{ event: 'awb.generated' }, { stage: 'awb_generated', scenario: 'delivered' }],
    [{ event: 'awb.failed' }, { stage: 'awb_failed', scenario: 'awb_failed' }],
    [{ event: 'order.cancelled' }, { stage: 'cancelled', scenario: 'delivered' }],
    [{ event: 'tracking.step', scenario: 'returned', to_step: 'attempt_failed_2' }, { stage: 'at_step', scenario: 'returned', step: 'attempt_failed_2' }],
    [{ event: 'tracking.step', to_step: 1 }, { stage: 'at_step', scenario: 'delivered', step: 'pickup' }],
    [{ event: 'tracking.step', to_step: '9' }, { stage: 'at_step', scenario: 'delivered', step: 'pod' }],
  ])('takes %j to %j', (request, expected) => {
    expect(target(request)).toEqual(expected);
  });

  it("takes an existing order's own scenario when none is given", () => {
    expect(target({ event: 'tracking.step', to_step: 'return_initiated' }, 'returned')).toEqual({ stage: 'at_step', scenario: 'returned', step: 'return_initiated' });
  });

  it.each([
    [{ event: 'awb.exploded' }, 'event'],
    [{ event: 'tracking.step' }, 'to_step'],
    [{ event: 'tracking.step', to_step: 0 }, 'to_step'],
    [{ event: 'tracking.step', to_step: 10 }, 'to_step'],
    [{ event: 'awb.failed', scenario: 'delivered' }, 'scenario'],
    [{ event: 'order.cancelled', scenario: 'awb_failed' }, 'scenario'],
    [{ event: 'awb.generated', scenario: 'nowhere' }, 'scenario'],
  ])('refuses %j naming %s', (request, field) => {
    expect(fieldOf(request)).toBe(field);
  });
});
