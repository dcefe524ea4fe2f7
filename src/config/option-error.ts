import type { SandboxOptions } from './options.js';

/** A value of an option that cannot be used; the message names the option. */
export class OptionError extends Error {
  constructor(readonly option: keyof SandboxOptions, message: string) {
    super(message);
    this.name = 'OptionError';
  }
}
