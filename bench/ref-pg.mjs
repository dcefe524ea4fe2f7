// Reference for the PostgreSQL part of npm run bench: a bare node:http server that answers
// each request with one statement of its own on a pool of 10 connections (no grouping of
// concurrent reads): GET reads the order of an AWB (the seeded orders table, by its
// index), POST inserts the body as one row of a table of its own (committed, as every
// create is). No framework, no authentication, no clock, no journal, no jobs. Not a bound
// (a replica groups concurrent point reads into one round trip, this does not), but a
// scale for what one statement per request costs on this machine.
import { createServer } from 'node:http';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
// An idle connection the server ends is the pool's to replace, not a crash.
pool.on('error', (error) => console.error(`pool: ${error.message}`));
const created = JSON.stringify({ success: true, message: 'ok', batch_id: '1', order_numbers: ['1'] });
let next = 0;

const failed = (res) => (error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(String(error));

const server = createServer((req, res) => {
  if (req.method === 'POST') {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      next += 1;
      pool
        .query('INSERT INTO reference_orders (order_no, data) VALUES ($1, $2)', [`${process.pid}-${next}`, Buffer.concat(chunks).toString()])
        .then(() => res.writeHead(201, { 'content-type': 'application/json' }).end(created), failed(res));
    });
  } else {
    pool
      .query('SELECT data FROM orders WHERE awb = $1', [req.url.slice(req.url.lastIndexOf('/') + 1)])
      .then(({ rows }) => res.writeHead(rows.length ? 200 : 404, { 'content-type': 'application/json' }).end(JSON.stringify(rows[0]?.data ?? null)), failed(res));
  }
});

await pool.query('CREATE TABLE IF NOT EXISTS reference_orders (order_no text PRIMARY KEY, data jsonb NOT NULL)');
server.listen(0, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}`));
process.on('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))));
