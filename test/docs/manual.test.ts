import { readdirSync, readFileSync } from 'node:fs';
import YAML from 'yaml';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, ROOT), 'utf8');
const README = read('README.md');
/** The manual's own pages: its guides, its reference and the development page. */
const PAGES = [
  ...readdirSync(new URL('docs/guides/', ROOT)).map((file) => `docs/guides/${file}`),
  ...readdirSync(new URL('docs/reference/', ROOT)).map((file) => `docs/reference/${file}`),
  'docs/development.md',
].filter((path) => path.endsWith('.md'));

describe('the README, a landing page', () => {
  it('is at most 400 lines', () => {
    expect(README.split('\n').length).toBeLessThanOrEqual(400);
  });

  it('starts with the two-command quick start, exactly', () => {
    const first = /```sh\n([\s\S]*?)```/.exec(README)![1]!;
    expect(first.split('\n').map((line) => line.replace(/\s+#.*$/, '').trim()).filter(Boolean)).toEqual(['npm install && npm start', 'npm test']);
  });

  it('links the architecture page on its first screen', () => {
    expect(README.split('\n').slice(0, 40).join('\n')).toContain('](docs/architecture.md)');
  });

  it("reaches every page of the manual from its table of contents", () => {
    const contents = /## Contents\n([\s\S]*?)\n## /.exec(README)![1]!;
    for (const page of PAGES) expect(contents, page).toContain(`](${page})`);
  });
});

describe('the manual under docs/', () => {
  it.each(PAGES)('%s starts by saying what a reader gets from it', (page) => {
    const [title, , intro] = read(page).split('\n');
    expect(title).toMatch(/^# /);
    expect(intro).toMatch(/^What you get from this page: /);
  });
});

describe('links named after a section of the webhooks guide', () => {
  it('"held deliveries" goes to "Held deliveries: what a first URL receives"', () => {
    const links = PAGES.flatMap((page) => [...read(page).matchAll(/\[held deliveries\]\(([^)]*)\)/gi)].map((m) => `${page}: ${m[1]}`));
    expect(links.length).toBeGreaterThan(0);
    for (const link of links) expect(link).toMatch(/webhooks\.md#held-deliveries-what-a-first-url-receives$/);
  });
});

describe('the control API in the manual', () => {
  const control = YAML.parse(read('spec/sandbox-control.yaml')) as { paths: Record<string, Record<string, unknown>> };
  const manual = [read('docs/reference/control-api.md'), ...PAGES.filter((page) => page.startsWith('docs/guides/')).map(read)].join('\n');
  const calls = Object.entries(control.paths).flatMap(([path, item]) =>
    Object.keys(item)
      .filter((method) => ['get', 'put', 'post', 'patch', 'delete'].includes(method))
      .map((method) => `${method.toUpperCase()} ${path}`),
  );

  // A path parameter may be named otherwise on the page ({id} for {delivery_id}).
  const named = (call: string) => new RegExp(`\`${call.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '\\{[a-z_]+\\}')}[\`?]`);

  it.each(calls)('documents %s (the control reference, or the guide it sends the reader to)', (call) => {
    expect(manual).toMatch(named(call));
  });

  it.each(calls)('names %s on the control reference page itself, the index of every call', (call) => {
    expect(read('docs/reference/control-api.md')).toMatch(named(call));
  });
});

describe("the readiness guide's table of items", () => {
  const { items } = JSON.parse(read('fixtures/readiness/catalogue.json')) as {
    items: Array<{ id: string; title: string; graded: boolean; sandbox_choice: boolean; source: string; handled: string }>;
  };
  const rows = new Map(
    read('docs/guides/ci-and-readiness.md')
      .split('\n')
      .map((line) => /^\| `([a-z0-9.-]+)` \| (.*) \| (.*) \| (.*) \|$/.exec(line))
      .filter((row) => row !== null)
      .map(([, id, title, handled, source]) => [id!, { title, handled, source }]),
  );

  // The report, its JUnit file and the dashboard print the catalogue's words: the page must say what they say.
  it.each(items.map((item) => [item.id, item] as const))('shows %s with the catalogue words the report prints', (id, item) => {
    expect(rows.get(id)).toEqual({
      title: item.title,
      handled: item.graded ? item.handled : 'not graded',
      source: `${item.source}${item.sandbox_choice ? ' (sandbox choice)' : ''}`,
    });
  });

  it('has no row for an item the catalogue does not hold', () => {
    expect([...rows.keys()].sort()).toEqual(items.map((item) => item.id).sort());
  });
});
