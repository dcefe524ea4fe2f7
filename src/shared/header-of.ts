/** The value of the header `name` (given in lower case), however `headers` spell it. */
export const headerOf = (headers: Record<string, string> | undefined, name: string): string | undefined =>
  Object.entries(headers ?? {}).find(([key]) => key.toLowerCase() === name)?.[1];

/**
 * Why no request the sandbox reads carries a header of this name, or undefined when one
 * may: node leaves `__proto__` out of a request's headers (it would be the prototype of
 * their object), so a criterion on it could never be met.
 */
export const unreadHeader = (name: string): string | undefined =>
  name.toLowerCase() === '__proto__' ? 'is a header name node leaves out of the request headers it reads, so no request would meet it' : undefined;

/**
 * A header's text as its client wrote it: Node reads header bytes as Latin-1, so the UTF-8
 * that curl and most clients send arrives as `Ã¼` for `ü`. Bytes that are not UTF-8 stay as
 * Node read them (a browser sends `ü` as the one Latin-1 byte).
 */
export function headerText(value: string): string {
  if (!/[\x80-\xff]/.test(value) || /[^\x00-\xff]/.test(value)) return value;
  const decoded = Buffer.from(value, 'latin1').toString('utf8');
  return decoded.includes('\ufffd') ? value : decoded;
}
