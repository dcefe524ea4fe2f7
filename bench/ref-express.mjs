// Reference: a hello-world express 5 app with a JSON body parser, the floor our framework sets.
import { readFileSync } from 'node:fs';
import express from 'express';

const app = express();
app.use(express.json({ limit: '1mb' }));
app.get('/v1/order/tracking/:awb', (req, res) => res.json({ last_status: '2', last_update: 1, history: [], awb: req.params.awb }));
// The same route answering a body the size of the sandbox's delivered history (9 entries, ~1.8 KB).
const full = JSON.parse(readFileSync(new URL('./tracking-body.json', import.meta.url), 'utf8'));
app.get('/full/v1/order/tracking/:awb', (req, res) => res.json(full));
app.post('/v1/order', (req, res) => res.status(201).json({ success: true, message: 'ok', batch_id: '1', order_numbers: (req.body.items ?? []).map((_, i) => String(i)) }));
const server = app.listen(0, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
