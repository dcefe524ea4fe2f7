/**
 * Keeps the signing secret a listener last printed, and says on stderr when the endpoint's
 * is another: at a connection (a sandbox that lost its data made the endpoint again, or it
 * was rotated meanwhile), or on an attempt (rotated while connected). A receiver set up with
 * the old secret refuses every delivery from then on.
 */
export function noteSecret(session: { secret?: string }, secret: string, err: (text: string) => void, onAttempt: boolean): void {
  if (session.secret !== undefined && session.secret !== secret) {
    const why = onAttempt ? 'while connected (rotated)' : 'since the last connection (rotated, or the endpoint made again by a sandbox that lost its data)';
    err(`shipping-sandbox listen: the signing secret changed ${why}: verify with ${secret} from now on\n`);
  }
  session.secret = secret;
}
