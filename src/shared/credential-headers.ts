/**
 * Request headers whose value is a credential: the request journal keeps them
 * `[redacted]`, and a fault rule that matches on one shows it masked. One list for both, so
 * that no answer shows a credential that another hides.
 */
export const CREDENTIAL_HEADERS: ReadonlySet<string> = new Set(['authorization', 'proxy-authorization', 'cookie', 'x-api-key']);
