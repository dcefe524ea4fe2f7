// Reference: a hello-world express 5 app with a JSON body parser, the floor our framework sets.
import express from 'express';

const app = express();
app.use(express.json({ limit: '1mb' }));
app.get('/v1/order/tracking/:awb', (req, res) => res.json({ last_status: '2', last_update: 1, history: [], awb: req.params.awb }));
// The same route answering a body the size of the sandbox's delivered history (9 entries, ~1.8 KB).
const entry = (i) => ({ note: 'Arrived at transit hub', description: `Shipment received at sorting center CAKUNG GATEWAY by Agus Setiawan, step ${i}`, branch: 'CAKUNG GATEWAY', update_on: 1763701200 + i * 3600, status: i === 8 ? '2' : null, pod_photo: null });
const full = { last_status: '2', last_update: 1763701200 + 8 * 3600, history: Array.from({ length: 9 }, (_, i) => entry(8 - i)) };
app.get('/full/v1/order/tracking/:awb', (req, res) => res.json(full));
app.post('/v1/order', (req, res) => res.status(201).json({ success: true, message: 'ok', batch_id: '1', order_numbers: (req.body.items ?? []).map((_, i) => String(i)) }));
const server = app.listen(0, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
