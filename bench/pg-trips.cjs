// Preloaded into a replica by bench/pg-trips.ts (node --require): counts what the process
// sends to PostgreSQL (the port in $BENCH_PG_PORT): statements by text, socket writes that
// reach the kernel (one per flush: a corked pipeline is one) and socket reads. SIGUSR1
// writes the counts so far to $BENCH_TRIPS_FILE and starts again from zero. Not part of the product.
const net = require('node:net');
const path = require('node:path');
const { writeWhole } = require('./signal-window.cjs');

const port = Number(process.env.BENCH_PG_PORT);
const file = process.env.BENCH_TRIPS_FILE;
if (port && file) {
  const Client = require(path.join(process.cwd(), 'node_modules/pg/lib/client.js'));
  let counts = { statements: 0, writes: 0, reads: 0, texts: new Map() };
  const toPg = (socket) => socket.remotePort === port;
  const { write, uncork, emit } = net.Socket.prototype;
  net.Socket.prototype.write = function (...args) {
    if (toPg(this) && this.writableCorked === 0) counts.writes += 1;
    return write.apply(this, args);
  };
  net.Socket.prototype.uncork = function () {
    if (toPg(this) && this.writableCorked === 1) counts.writes += 1;
    return uncork.call(this);
  };
  net.Socket.prototype.emit = function (event, ...args) {
    if (event === 'data' && toPg(this)) counts.reads += 1;
    return emit.call(this, event, ...args);
  };
  const query = Client.prototype.query;
  Client.prototype.query = function (config, ...rest) {
    const text = String(typeof config === 'string' ? config : config?.text).replace(/\s+/g, ' ').slice(0, 110);
    // The journal's, the reports' and the counters' pools connect with options of their own.
    const key = `${this.connectionParameters?.options ? 'aside' : 'main'} | ${text}`;
    counts.statements += 1;
    counts.texts.set(key, (counts.texts.get(key) ?? 0) + 1);
    return query.call(this, config, ...rest);
  };
  process.on('SIGUSR1', () => {
    const { texts, ...totals } = counts;
    writeWhole(file, JSON.stringify({ ...totals, texts: [...texts].sort((a, b) => b[1] - a[1]) }));
    counts = { statements: 0, writes: 0, reads: 0, texts: new Map() };
  });
}
