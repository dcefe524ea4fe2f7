/** Both OpenAPI specs, loaded and compiled once: routing data, validators, the served specs. */

export type { CompiledOperation, CompiledSpec } from './compile.js';
export { PROVIDER_SPEC, deref } from './load.js';
export type { OpenApiDocument } from './load.js';
export { servedSpec, servedSpecText } from './served.js';
export { compiledSpecs } from './specs.js';
export { compileSpec } from './compile.js';
