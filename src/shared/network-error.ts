/** OpenSSL's error text: `<thread>:error:<code>:<library>:<function>:<reason>:<file>:<line>:`, alone or after Node's words (`write EPROTO …`). */
const OPENSSL = /^(?:[a-z]+ EPROTO )?[0-9A-F]+:error:[0-9A-F]+:[^:]*:[^:]*:([^:]+):/;

/**
 * A failure's message as one line: OpenSSL's text (`80DC…:error:0A00010B:SSL routines:
 * ssl3_get_record:wrong version number:…/ssl3_record.c:350:` and a line break) cut to its
 * reason, no line break kept. An https:// URL to a server that speaks plain http fails with
 * a wrong version number: the line says so, naming the `peer` (a receiver, the sandbox).
 */
export function readableFailure(message: string, peer: string): string {
  const reason = OPENSSL.exec(message)?.[1];
  const line = (reason ?? message).replace(/\s+/g, ' ').trim();
  return reason === 'wrong version number' ? `${line} (an https:// URL to a ${peer} that speaks plain http?)` : line;
}

/**
 * A failed request's system error as one line of a log or a delivery's `error`: its code,
 * then its message (see readableFailure).
 *
 * @example oneLineError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:3000') // 'ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:3000'
 */
export function oneLineError(code: string, message: string | undefined): string {
  const reason = message === undefined ? '' : readableFailure(message, 'receiver');
  const hint = code === 'ERR_SSL_WRONG_VERSION_NUMBER' && !reason.includes('speaks plain http') ? ' (an https:// URL to a receiver that speaks plain http?)' : '';
  return `${code}${reason === '' ? '' : `: ${reason}`}${hint}`;
}
