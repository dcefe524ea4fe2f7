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

  it("forgets a client's oldest answers past the 64 it keeps, and never for another client's", () => {
    const answers = new AnswersOut();
    answers.hold('client-b', 'r1:1');
    answers.release('client-b', 'r1:1', 5);
    for (let seq = 0; seq <= 5_000; seq += 1) {
      answers.hold('client-a', `r1:${seq}`);
      answers.release('client-a', `r1:${seq}`, seq);
    }
    expect(answers.of('client-a', 'r1:4936')).toBeUndefined();
    expect(answers.of('client-a', 'r1:4937')).toBe(4_937);
    expect(answers.of('client-a', 'r1:5000')).toBe(5_000);
    // Client A's flood of answers left client B's alone.
    expect(answers.of('client-b', 'r1:1')).toBe(5);
  });
});
