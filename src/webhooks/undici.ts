import { createRequire } from 'node:module';

type Undici = typeof import('undici');
let loaded: Undici | undefined;

/**
 * undici, the webhook sender's HTTP client, loaded at first use, so that loading it is not
 * part of start-up. A sandbox loads it just after it starts listening (`TargetGuard.prepare`),
 * so the first webhook attempt does not wait for it either.
 */
export const undici = (): Undici => (loaded ??= createRequire(import.meta.url)('undici') as Undici);
