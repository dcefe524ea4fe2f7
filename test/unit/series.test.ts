import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { series } from '../../src/http/edge.js';

/** An app with `handlers` as one layer, answering 500 with the error's message. */
function appWith(...handlers: RequestHandler[]) {
  const app = express();
  app.use(series(...handlers));
  app.use((_req, res) => void res.status(404).send('none answered'));
  const onError: ErrorRequestHandler = (error: Error, _req, res, _next) => void res.status(500).send(error.message);
  app.use(onError);
  return app;
}

const mark = (name: string): RequestHandler => (_req, res, next) => {
  res.append('X-Ran', name);
  next();
};

describe('series (the edge as one router layer)', () => {
  it('runs its middleware in order, then goes on to the next layer', async () => {
    const res = await request(appWith(mark('a'), mark('b'), mark('c'))).get('/');
    expect(res.status).toBe(404);
    expect(res.headers['x-ran']).toBe('a, b, c');
  });

  it('stops where a middleware answers', async () => {
    const res = await request(appWith(mark('a'), (_req, res) => void res.status(204).end(), mark('never'))).get('/');
    expect(res.status).toBe(204);
    expect(res.headers['x-ran']).toBe('a');
  });

  it.each([
    ['passed on', ((_req, _res, next) => next(new Error('passed'))) as RequestHandler, 'passed'],
    ['thrown', (() => {
      throw new Error('thrown');
    }) as RequestHandler, 'thrown'],
    ['a rejected promise', (async () => {
      throw new Error('rejected');
    }) as RequestHandler, 'rejected'],
  ])('hands an error %s to the error handlers, skipping the rest', async (_how, failing, message) => {
    const res = await request(appWith(mark('a'), failing, mark('never'))).get('/');
    expect(res.status).toBe(500);
    expect(res.text).toBe(message);
    expect(res.headers['x-ran']).toBe('a');
  });
});
