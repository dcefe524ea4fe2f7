import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURES_DIR, loadFixtures, MAX_STEPS, noSuchStep, STATUS_CODES, stepNamed } from '../../src/fixtures/index.js';
import { loadSpec, PROVIDER_SPEC } from '../../src/spec/load.js';
import { testSandbox } from '../support/sandbox.js';
import { tempDir } from '../support/tmp.js';

const delivered = JSON.parse(readFileSync(join(FIXTURES_DIR, 'scenarios/delivered.json'), 'utf8')) as { steps: Array<Record<string, unknown>> } & Record<string, unknown>;
/** A scenario of its own name and magic AWB, as a contributor adds one beside the shipped ones. */
const custom = (over: Record<string, unknown>) => ({ ...delivered, name: 'custom', magic_awb: 'SBXCUS00000099', ...over });
const step = (i: number, over: Record<string, unknown> = {}) => ({ ...delivered.steps[0], key: `step_${i}`, at: `${i + 1}h`, ...over });

describe('the scenario fixtures', () => {
  const dir = tempDir();
  /** The shipped fixtures with `scenario` added as fixtures/scenarios/zz-custom.json. */
  const withScenario = (scenario: unknown): string => {
    const copy = join(dir(), 'fixtures');
    cpSync(FIXTURES_DIR, copy, { recursive: true });
    writeFileSync(join(copy, 'scenarios/zz-custom.json'), JSON.stringify(scenario));
    return copy;
  };

  it('load, each within the step limit', () => {
    const { scenarios } = loadFixtures();
    expect([...scenarios.keys()]).toEqual(['awb_failed', 'cancelled', 'delivered', 'failed_attempt', 'returned', 'stuck']);
    for (const scenario of scenarios.values()) expect(scenario.steps.length).toBeLessThanOrEqual(MAX_STEPS);
  });

  it("take the status codes of the provider spec's TrackingStatus, no more and no fewer", () => {
    const spec = loadSpec(PROVIDER_SPEC) as { components: { schemas: Record<string, { enum?: string[] }> } };
    expect([...STATUS_CODES]).toEqual(spec.components.schemas.TrackingStatus!.enum);
  });

  it.each([
    ['a status that is a number', custom({ steps: [step(0, { status: 1 })] }), 'steps[0].status: must be a status code as text ("1", "2", "3", "4", "5": the spec\'s TrackingStatus) or null'],
    ['a status code the spec does not have', custom({ steps: [step(0, { status: '6' })] }), 'steps[0].status: must be a status code as text ("1", "2", "3", "4", "5"'],
    ['a step after the proof of delivery', custom({ steps: [step(0, { pod: true, status: '2' }), step(1)] }), 'steps[0].pod: the proof of delivery ends the journey: no step may follow it'],
    ['a proof of delivery on an intermediate scan', custom({ steps: [step(0, { status: '1' }), step(1, { status: null, pod: true })] }), 'steps[1].pod: a proof of delivery needs the status of a scan that has one ("2" or "4"), not null'],
    ['a POD scan without its photo', custom({ steps: [step(0, { status: '2', pod: false })] }), 'steps[0].pod: must be true on the POD scan (status "2"), which carries the photo'],
    ['a step after the POD scan', custom({ steps: [step(0, { status: '2', pod: true }), step(1, { status: '3' })] }), 'steps[0].pod: the proof of delivery ends the journey: no step may follow it'],
    ['two steps of one key', custom({ steps: [step(0), step(1, { key: 'step_0' })] }), 'steps[1].key: "step_0" is the key of an earlier step'],
    ['a step without a note', custom({ steps: [step(0, { note: undefined })] }), 'steps[0].note: must be text'],
    ['a placeholder nothing fills', custom({ steps: [step(0, { description: 'At {nonsense}' })] }), 'steps[0].description: {nonsense} is no placeholder'],
    ['a placeholder that is no word', custom({ steps: [step(0, { branch: '{receiver-city}' })] }), 'steps[0].branch: {receiver-city} is no placeholder'],
    ['a placeholder in a note, which is shown as written', custom({ steps: [step(0, { note: 'Scan at {origin_branch}' })] }), 'steps[0].note: {origin_branch} is no placeholder (a note is shown as written)'],
    ['a step without an at', custom({ steps: [step(0, { at: undefined })] }), 'steps[0].at: must be text'],
    ['an at that is a number', custom({ steps: [step(0, { at: 3600 })] }), 'steps[0].at: must be text'],
    ['an at past ten years, which no clock reaches', custom({ steps: [step(0, { at: '1000000000d' })] }), 'steps[0].at: at most 3650d after the AWB (the clocks stop at 9989-12-31), not 1000000000d'],
    ['an at that is a bare number, which would be milliseconds', custom({ steps: [step(0, { at: '7200' })] }), 'steps[0].at: "7200" has no unit (a bare number would be milliseconds): write it with one, e.g. 7200ms, 2h or 1d4h'],
    ['an at that is a bare decimal', custom({ steps: [step(0, { at: ' 5.5 ' })] }), 'steps[0].at: " 5.5 " has no unit'],
    ['an at that is no duration', custom({ steps: [step(0, { at: '2 hours' })] }), 'steps[0].at: "2 hours" is not a duration: write one such as 30m, 2h or 1d4h'],
    ['a field a scenario does not have', custom({ statuz: '2' }), 'statuz: is not a field of a scenario (name, description, magic_awb, awb, awb_failure_reason, steps)'],
    ['a field a step does not have', custom({ steps: [step(0, { statuz: '2' })] }), 'steps[0].statuz: is not a field of a step (key, at, note, description, branch, status, pod)'],
    ['an AWB outcome that is neither', custom({ awb: 'maybe' }), 'awb: must be "generated" or "fails"'],
    ['a name that is no identifier', custom({ name: 'Custom One' }), 'name: must be lower-case text'],
    ['a magic AWB of another shape', custom({ magic_awb: 'JX1' }), 'magic_awb: must be SBX, three capitals and eight digits'],
    [`more than ${MAX_STEPS} steps`, custom({ steps: Array.from({ length: MAX_STEPS + 1 }, (_, i) => step(i)) }), `steps: at most ${MAX_STEPS}, not ${MAX_STEPS + 1}`],
  ])('stop the start on %s, naming the file and the field', (_, scenario, message) => {
    const fixtures = withScenario(scenario);
    expect(() => loadFixtures(fixtures)).toThrow('fixtures/scenarios/zz-custom.json is not a valid scenario:');
    expect(() => loadFixtures(fixtures)).toThrow(message);
  });

  it.each([
    ['JSON that is not', '{"name": "custom", steps: []}', /scenarios\/zz-custom\.json is not JSON: .*Expected double-quoted property name/],
    ['an empty file', '', /scenarios\/zz-custom\.json is not JSON: /],
    ['null', 'null', /zz-custom\.json is not a valid scenario:\n {2}the file must hold one scenario: an object \{"name": \.\.\., "steps": \[\.\.\.\]\}, not null/],
    ['a list', '[]', /zz-custom\.json is not a valid scenario:\n {2}the file must hold one scenario: an object .*, not a list/],
  ])('stop the start on a file of %s, naming the file', (_, text, message) => {
    const fixtures = withScenario({});
    writeFileSync(join(fixtures, 'scenarios/zz-custom.json'), text);
    expect(() => loadFixtures(fixtures)).toThrow(message);
  });

  it('read a file that begins with a byte order mark, as editors on Windows write it', () => {
    const fixtures = withScenario({});
    writeFileSync(join(fixtures, 'scenarios/zz-custom.json'), `\uFEFF${JSON.stringify(custom({}))}`);
    expect(loadFixtures(fixtures).scenarios.get('custom')?.steps).toHaveLength(delivered.steps.length);
  });

  it('take an at of up to 3650d', () => {
    expect(loadFixtures(withScenario(custom({ steps: [step(0), step(1, { at: '3650d' })] }))).scenarios.get('custom')?.offsets[1]).toBe(3650 * 86_400_000);
  });

  it.each([
    ['name', custom({ name: 'delivered' }), 'two scenarios have the name delivered'],
    ['magic AWB', custom({ magic_awb: 'SBXDLV00000001' }), 'two scenarios have the magic_awb SBXDLV00000001'],
  ])('stop the start on a %s another scenario has (it would replace it without a word)', (_, scenario, message) => {
    expect(() => loadFixtures(withScenario(scenario))).toThrow(message);
  });

  it('answer 404 for the magic AWB of a scenario with no step to show, as for an order before its first scan (not 200 with no body)', async () => {
    const sandbox = await testSandbox({}, { fixturesDir: withScenario(custom({ steps: [] })) });
    try {
      const res = await sandbox.call('GET', '/v1/order/tracking/SBXCUS00000099');
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ success: false });
      expect((await sandbox.call('GET', '/v1/order/tracking/SBXDLV00000001')).status).toBe(200);
    } finally {
      await sandbox.close();
    }
  });
});

describe('a step named by key or by number (an advance, a trigger\'s to_step)', () => {
  it('takes a key as written before a number, so a step whose key is digits is that step', () => {
    expect(stepNamed(['pickup', 'transit', 'pod'], 2)).toBe('transit');
    expect(stepNamed(['pickup', 'transit', 'pod'], '3')).toBe('pod');
    expect(stepNamed(['pickup', 'transit', 'pod'], 'pod')).toBe('pod');
    expect(stepNamed(['3', '2', '1'], '1')).toBe('1');
    expect(stepNamed(['10', '20', '30'], '20')).toBe('20');
    expect(stepNamed(['10', '20', '30'], 2)).toBe('20');
  });

  it('names no step for a number outside the scenario or an unknown key', () => {
    for (const given of [0, -1, 4, 1.5, '04x', '01', '+2', ' 2', '2.0', 'teleport', 2 ** 40]) expect(stepNamed(['pickup', 'transit', 'pod'], given)).toBeUndefined();
  });

  it('tells a number that is a key as text how to name that step', () => {
    expect(stepNamed(['3', '2', '1', '7'], 7)).toBeUndefined();
    expect(noSuchStep('digits', ['3', '2', '1', '7'], 7)).toBe('must be a step of scenario digits (its key, or its number from 1): 3, 2, 1, 7; a number is a step\'s place: send "7", as text, for the step whose key it is');
    expect(noSuchStep('delivered', ['pickup', 'pod'], 9)).toBe('must be a step of scenario delivered (its key, or its number from 1): pickup, pod');
    const plain = 'must be a step of scenario delivered (its key, or its number from 1): pickup, pod';
    for (const given of ['01', '+1', '1.0']) expect(noSuchStep('delivered', ['pickup', 'pod'], given)).toBe(`${plain}; a step's number is written without a sign, leading zeros or a fraction: "1"`);
    // No hint that would name no step, or a step by its key rather than its place.
    for (const given of ['9', '09', '-1', '00', '1.5', ' 2 ', '099999999999999999999']) expect(noSuchStep('delivered', ['pickup', 'pod'], given)).toBe(plain);
    expect(noSuchStep('digits', ['3', '2', '1', '7'], '07')).toBe('must be a step of scenario digits (its key, or its number from 1): 3, 2, 1, 7');
  });
});
