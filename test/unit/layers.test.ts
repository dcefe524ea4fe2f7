import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

// The rules of docs/architecture.md, checked on the source.
const SRC = join(import.meta.dirname, '../../src');
const files = (readdirSync(SRC, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts')).map((f) => ({ path: f.replaceAll('\\', '/'), text: readFileSync(join(SRC, f), 'utf8') }));
const outside = (...folders: string[]) => files.filter((f) => !folders.some((folder) => f.path.startsWith(folder)));
/**
 * The HTTP edge (with spec/: validation and Prefer answers, which speak HTTP by nature)
 * and the composition, where express and the whole of the services belong.
 */
const EDGE = ['http/', 'spec/', 'app/', 'cli.ts', 'index.ts'];
const offenders = (list: typeof files, pattern: RegExp) => list.filter((f) => pattern.test(f.text)).map((f) => relative('.', f.path));

describe('the layers', () => {
  it('read and write records only through the storage port outside src/store', () => {
    expect(offenders(outside('store/'), /\bstore\.(get|put|values|count|commit|delete)\(/)).toEqual([]);
    expect(offenders(outside('store/'), /store\/(store|journal|snapshot-file|schema|embedded\/[\w-]+|postgres\/[\w-]+)\.js'/)).toEqual([]);
    expect(offenders(outside('store/postgres/'), /from 'pg'/)).toEqual([]);
  });

  it('keep HTTP out of the domain: no express, no HTTP error helpers', () => {
    expect(offenders(outside(...EDGE), /from 'express'/)).toEqual([]);
    expect(offenders(outside(...EDGE), /http\/errors\.js'/)).toEqual([]);
  });

  it('give handlers plain request data: no req, res or res.locals', () => {
    expect(offenders(outside('http/'), /res\.locals|raw\.(req|res)|\braw: \{ ?req/)).toEqual([]);
  });

  it('wire services at construction, with no connect() between them', () => {
    // The PostgreSQL adapter connects to its database (pg's connect()): not wiring between services.
    expect(offenders(outside('store/postgres/'), /\.connect\(/)).toEqual([]);
  });
});
