import { readFileSync } from 'node:fs';

/** The version of this sandbox, from its package.json (shown by --version, the banner and health). */
export const VERSION: string = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
