// Reference: the fastest a Node server can answer here, fixed bodies, no framework.
import { createServer } from 'node:http';

const tracking = JSON.stringify({ last_status: '2', last_update: 1, history: [] });
const created = JSON.stringify({ success: true, message: 'ok', batch_id: '1', order_numbers: ['1'] });
const server = createServer((req, res) => {
  if (req.method === 'POST') {
    req.resume();
    req.on('end', () => res.writeHead(201, { 'content-type': 'application/json' }).end(created));
  } else {
    res.writeHead(200, { 'content-type': 'application/json' }).end(tracking);
  }
});
server.listen(0, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
