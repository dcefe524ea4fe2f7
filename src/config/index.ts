export { checkClientConfigs } from './check.js';
export { optionsOf, program } from './command.js';
export { readConfigFile } from './file.js';
export { OPTIONS, OptionError, resolveOptions, shownRetention } from './options.js';
export type { ResolvedOptions, SandboxOptions } from './options.js';
