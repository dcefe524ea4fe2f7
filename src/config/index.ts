export { checkClientConfigs } from './check.js';
export { optionsOf, program } from './command.js';
export { readConfigFile } from './file.js';
export { OptionError } from './option-error.js';
export { resolveOptions } from './resolve.js';
export { shownRetention } from './shown.js';
export { OPTIONS } from './table.js';
export type { ResolvedOptions, SandboxOptions } from './options.js';
