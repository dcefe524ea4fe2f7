/** OpenSSL's error text: `<thread>:error:<code>:<library>:<function>:<reason>:<file>:<line>:`, alone or after Node's words (`write EPROTO …`). */
const OPENSSL = /^(?:[a-z]+ EPROTO )?[0-9A-F]+:error:[0-9A-F]+:[^:]*:[^:]*:([^:]+):/;

/** Node's code for the failure an https:// URL to a server that speaks plain http meets. */
const WRONG_VERSION_CODE = 'ERR_SSL_WRONG_VERSION_NUMBER';

/** A message on one line: OpenSSL's text cut to its reason, and whether that reason is a wrong version number. */
function cut(message: string): { line: string; wrongVersion: boolean } {
  const reason = OPENSSL.exec(message)?.[1];
  return { line: (reason ?? message).replace(/\s+/g, ' ').trim(), wrongVersion: reason === 'wrong version number' };
}

/** What a wrong version number most likely means, naming the `peer` (a receiver, the sandbox). */
function plainHttpHint(peer: string): string {
  return `(an https:// URL to a ${peer} that speaks plain http?)`;
}

/**
 * A failure's message as one line: OpenSSL's text (`80DC…:error:0A00010B:SSL routines:
 * ssl3_get_record:wrong version number:…/ssl3_record.c:350:` and a line break) cut to its
 * reason, no line break kept. An https:// URL to a server that speaks plain http fails with
 * a wrong version number: the line says so, naming the `peer` (a receiver, the sandbox).
 */
export function readableFailure(message: string, peer: string): string {
  const { line, wrongVersion } = cut(message);
  return wrongVersion ? `${line} ${plainHttpHint(peer)}` : line;
}

/**
 * A failed request's system error as one line of a log or a delivery's `error`: its code,
 * then its message cut as readableFailure cuts it, then the hint when either of them names
 * a wrong version number.
 *
 * @example oneLineError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:3000') // 'ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:3000'
 */
export function oneLineError(code: string, message: string | undefined): string {
  const { line, wrongVersion } = cut(message ?? '');
  const hint = wrongVersion || code === WRONG_VERSION_CODE ? ` ${plainHttpHint('receiver')}` : '';
  return `${code}${line === '' ? '' : `: ${line}`}${hint}`;
}

/** What a "bad response" from undici is, in an attempt's error. */
export const BAD_RESPONSE = 'the answer was not one HTTP response the sender can read, such as a 100 Continue the sandbox did not ask for: answer with the final status only';

/**
 * A failed fetch (a webhook attempt, a listener's forward to its receiver) as one line: its
 * cause's code and message, or fetch's own "fetch failed" with its cause's words, which say
 * what it does not (a port fetch will not use, an answer that is not HTTP). A 100 Continue
 * undici did not ask for (it sends no Expect) is its "bad response": the line says so.
 */
export function fetchFailure(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code === 'UND_ERR_SOCKET' && cause.message === 'bad response') return `${cause.code}: ${cause.message} (${BAD_RESPONSE})`;
  if (cause?.code) return oneLineError(cause.code, cause.message);
  const message = (error as Error).message ?? String(error);
  return cause?.message ? `${message}: ${cause.message}` : message;
}
