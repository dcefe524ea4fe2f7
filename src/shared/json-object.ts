/**
 * Whether a parsed JSON value is an object (not null, not an array), its fields then readable
 * by name: the first check on anything read from outside (a data file's record, another
 * sandbox's answer).
 */
export const isJsonObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
