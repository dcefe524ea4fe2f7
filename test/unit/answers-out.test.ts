import { describe, expect, it } from 'vitest';
import { AnswersOut } from '../../src/report/answers-out.js';

describe('AnswersOut', () => {
  it("tells a client's answer waiting from gone out, and keeps clients apart though their arrival numbers meet", () => {
    const answers = new AnswersOut();
    answers.hold('client-a', 'r1:7');
    expect(answers.of('client-a', 'r1:7')).toBe('waiting');
    // Client B's request 7 is another request: nothing is known of it here.
    expect(answers.of('client-b', 'r1:7')).toBeUndefined();
    answers.release('client-a', 'r1:7', 1_000);
    expect(answers.of('client-a', 'r1:7')).toBe(1_000);
    expect(answers.of('client-b', 'r1:7')).toBeUndefined();
    // Another replica's request: not known here.
    expect(answers.of('client-a', 'r2:7')).toBeUndefined();
  });

  it('forgets the oldest answers past the ones it keeps', () => {
    const answers = new AnswersOut();
    for (let seq = 0; seq <= 4_096; seq += 1) {
      answers.hold('client-a', `r1:${seq}`);
      answers.release('client-a', `r1:${seq}`, seq);
    }
    expect(answers.of('client-a', 'r1:0')).toBeUndefined();
    expect(answers.of('client-a', 'r1:1')).toBe(1);
    expect(answers.of('client-a', 'r1:4096')).toBe(4_096);
  });
});
