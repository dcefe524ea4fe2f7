import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';

/** A fresh temporary folder for each test, removed after it: call the returned function for its path. */
export function tempDir(): () => string {
  let dir = '';
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sandbox-test-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  return () => dir;
}
