import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { describe, expect, it } from 'vitest';
import { series } from '../../src/http/edge.js';

/** Runs `handlers` as one series on a bare request; resolves with what the series passed on, and the handlers that ran. */
function run(...handlers: RequestHandler[]): Promise<{ passed: unknown[]; ran: string[] }> {
  const ran: string[] = [];
  const req = { ran } as unknown as Request;
  return new Promise((resolve) => {
    const next: NextFunction = (...passed: unknown[]) => resolve({ passed, ran });
    series(...handlers)(req, {} as Response, next);
  });
}

const mark = (name: string): RequestHandler => (req, _res, next) => {
  (req as unknown as { ran: string[] }).ran.push(name);
  next();
};

describe('series (the edge as one router layer)', () => {
  it('runs its middleware in order, then goes on to the next layer with no error', async () => {
    expect(await run(mark('a'), mark('b'), mark('c'))).toEqual({ passed: [], ran: ['a', 'b', 'c'] });
  });

  it('stops where a middleware answers instead of calling next', async () => {
    let answered = false;
    const answer: RequestHandler = () => void (answered = true);
    const outcome = await Promise.race([run(mark('a'), answer, mark('never')), new Promise((resolve) => setTimeout(() => resolve('nothing passed on'), 50))]);
    expect(outcome).toBe('nothing passed on');
    expect(answered).toBe(true);
  });

  it.each([
    ['passed on', ((_req, _res, next) => next(new Error('passed'))) as RequestHandler, 'passed'],
    ['thrown', (() => {
      throw new Error('thrown');
    }) as RequestHandler, 'thrown'],
    ['a rejected promise', (async () => {
      throw new Error('rejected');
    }) as RequestHandler, 'rejected'],
    ['a promise rejected without a reason', (() => Promise.reject(undefined)) as unknown as RequestHandler, 'Rejected promise'],
  ])('passes an error %s on to the error handlers, skipping the rest', async (_how, failing, message) => {
    const { passed, ran } = await run(mark('a'), failing, mark('never'));
    expect(passed).toHaveLength(1);
    expect((passed[0] as Error).message).toBe(message);
    expect(ran).toEqual(['a']);
  });
});
