/** The options: one table of every flag, variable and default, resolved once; the command line and the config file built from it. */

export { checkClientConfigs, openTargetsShared } from './check.js';
export { optionsOf, program } from './command.js';
export { readConfigFile } from './file.js';
export { OptionError } from './option-error.js';
export { resolveOptions } from './resolve.js';
export { shownDatabase, shownRetention } from './shown.js';
export { listenFailure, startFailure } from './start-failure.js';
export { OPTIONS } from './table.js';
export { claimLeaseMs } from './options.js';
export type { ResolvedOptions, SandboxOptions } from './options.js';
