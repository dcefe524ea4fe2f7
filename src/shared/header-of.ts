/** The value of the header `name` (given in lower case), however `headers` spell it. */
export const headerOf = (headers: Record<string, string> | undefined, name: string): string | undefined =>
  Object.entries(headers ?? {}).find(([key]) => key.toLowerCase() === name)?.[1];
