import type { Caller, ClientRegistry } from '../clients/index.js';
import { ApiError, messages } from './errors.js';

const challenge = (error?: string) => ({ 'WWW-Authenticate': error ? `Bearer error="${error}"` : 'Bearer' });

/** Who an `Authorization: Bearer <token>` header is (a client's token or an admin token); throws the 401 otherwise. */
export function authenticate(registry: ClientRegistry, header: string | undefined): Caller {
  if (!header) throw new ApiError(401, messages.missingToken, [{ field: 'header.authorization', message: 'is required' }], challenge());
  const token = bearerToken(header);
  if (token === undefined) {
    throw new ApiError(401, messages.malformedAuth, [{ field: 'header.authorization', message: 'must be "Bearer <token>"' }], challenge('invalid_request'));
  }
  const caller = registry.callerOf(token);
  if (!caller) throw new ApiError(401, messages.unknownToken, [{ field: 'header.authorization', message: 'unknown token' }], challenge('invalid_token'));
  return caller;
}

/** Whether an Authorization header names a token of this sandbox (a client's or an admin's), without the 401. */
export function knownToken(registry: ClientRegistry, header: string | undefined): boolean {
  const token = header ? bearerToken(header) : undefined;
  return token !== undefined && registry.callerOf(token) !== undefined;
}

/** The token of an `Authorization: Bearer <token>` header, or undefined when it is not one. */
const bearerToken = (header: string): string | undefined => /^Bearer +(\S+) *$/i.exec(header)?.[1];
