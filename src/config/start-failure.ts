/** What to do about an error of listening on --host and --port, by its code; the other errors of a start say it themselves. */
const LISTEN_HINTS: Readonly<Record<string, string>> = {
  EADDRINUSE: 'Another process listens there: stop it, or start this sandbox with another --port (PORT; 0 picks a free one).',
  EACCES: 'This user may not listen on that port: use one above 1023 (--port, PORT).',
  EADDRNOTAVAIL: 'No interface of this machine has that address: use 127.0.0.1, or 0.0.0.0 for every interface (--host, HOST).',
  ENOTFOUND: 'That host is no address and no name this machine resolves: use 127.0.0.1, or 0.0.0.0 for every interface (--host, HOST).',
  EAI_AGAIN: 'That host name could not be looked up now (no name server answered): use an address such as 127.0.0.1, or 0.0.0.0 for every interface (--host, HOST).',
};

/** The errors of the HTTP server's listen, its host name's look-up included (syscall `getaddrinfo`), as the start marks them. */
const ofListening = new WeakSet<object>();

/** Marks an error of the HTTP server's listen, so that `startFailure` says what to do about it. */
export function listenFailure(error: unknown): unknown {
  if (typeof error === 'object' && error !== null) ofListening.add(error);
  return error;
}

/**
 * A start's failure as one line for the user: its message, and for an error of the listen
 * itself (not of a file the start could not read or write, which can say EACCES too) what to
 * do about it.
 *
 * @example startFailure(Object.assign(new Error('listen EADDRINUSE: address already in use 127.0.0.1:4010'), { code: 'EADDRINUSE', syscall: 'listen' }))
 * // 'listen EADDRINUSE: address already in use 127.0.0.1:4010. Another process listens there: …'
 */
export function startFailure(error: unknown): string {
  const told = error instanceof Error ? error.message : String(error);
  const { code, syscall } = (error ?? {}) as NodeJS.ErrnoException;
  const listening = syscall === 'listen' || (typeof error === 'object' && error !== null && ofListening.has(error));
  const hint = listening && code !== undefined ? LISTEN_HINTS[code] : undefined;
  if (hint === undefined) return told;
  // Node's own messages (`listen EADDRINUSE: address already in use 127.0.0.1:4010`) end without a full stop.
  return `${told}${/[.!?]$/.test(told) ? '' : '.'} ${hint}`;
}
