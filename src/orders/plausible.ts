/**
 * Makes a create answer generated from the schema (`Prefer: dynamic=true`) one the
 * provider could send: one order number per item of the request, all different,
 * in the generated numbers' form (numeric text). Generated numbers are kept while
 * they last; more are made from the last by counting up. Changes `body` in place.
 *
 * @example plausibleCreate(body, { items: [{}, {}] }) // body.order_numbers has 2 numbers
 */
export function plausibleCreate(body: unknown, request: unknown): void {
  const items = (request as { items?: unknown } | undefined)?.items;
  if (typeof body !== 'object' || body === null || !Array.isArray(items)) return;
  const answer = body as { order_numbers?: unknown };
  const generated = Array.isArray(answer.order_numbers) ? answer.order_numbers.filter((n): n is string => typeof n === 'string' && /^[0-9]+$/.test(n)) : [];
  const numbers = [...new Set(generated)].slice(0, items.length);
  let next = BigInt(numbers.at(-1) ?? '100000000000');
  while (numbers.length < items.length) {
    next += 1n;
    if (!numbers.includes(String(next))) numbers.push(String(next));
  }
  answer.order_numbers = numbers;
}
