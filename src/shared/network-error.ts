/** OpenSSL's error text: `<thread>:error:<code>:<library>:<function>:<reason>:<file>:<line>:`. */
const OPENSSL = /^[0-9A-F]+:error:[0-9A-F]+:[^:]*:[^:]*:([^:]+):/;

/**
 * A failed request's system error as one line of a log or a delivery's `error`: its code,
 * then its message. OpenSSL's message (`80DC…:error:0A00010B:SSL routines:ssl3_get_record:
 * wrong version number:…/ssl3_record.c:350:` and a line break) is cut to its reason, and no
 * line break is kept. An https:// URL to a receiver that speaks plain http fails with a
 * wrong version number: the line says so.
 *
 * @example oneLineError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:3000') // 'ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:3000'
 */
export function oneLineError(code: string, message: string | undefined): string {
  const reason = message === undefined ? '' : (OPENSSL.exec(message)?.[1] ?? message).replace(/\s+/g, ' ').trim();
  const hint = code === 'ERR_SSL_WRONG_VERSION_NUMBER' ? ' (an https:// URL to a receiver that speaks plain http?)' : '';
  return `${code}${reason === '' ? '' : `: ${reason}`}${hint}`;
}
