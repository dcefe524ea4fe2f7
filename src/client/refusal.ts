/** The sandbox's error envelope, as far as a refusal is told to the user. */
interface Envelope {
  message?: string;
  errors?: Array<{ field: string; message: string }>;
}

/** The sandbox's error envelope in an answer's text, or undefined for a body that is not one (another server's page, say). */
export function envelopeOf(text: string): Envelope | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    const envelope = typeof parsed === 'object' && parsed !== null ? (parsed as Envelope) : undefined;
    return typeof envelope?.message === 'string' ? envelope : undefined;
  } catch {
    return undefined;
  }
}

/** Said of an answer without the sandbox's envelope: a proxy's page, or another server at --url (a webhook receiver's port, say). */
const NO_ENVELOPE = "not the sandbox's error envelope: is --url a shipping sandbox, or a proxy in front of one?";

/**
 * A refusal of the sandbox as a client command prints it: the status and the envelope's
 * message and field errors, or the start of a body that is not one and, with `hint`, what it
 * may be (listen's reconnects meet a gateway's page while the sandbox restarts); a field error about
 * `header.x-sandbox-client` says which flag sets it.
 */
export function refusal(status: number, text: string, hint = true): string {
  const envelope = envelopeOf(text);
  if (envelope === undefined) return `the sandbox answered ${status}${text.trim() ? `: ${text.trim().slice(0, 300)}` : ' with an empty body'}${hint ? ` (${NO_ENVELOPE})` : ''}`;
  const fields = (envelope.errors ?? []).map((e) => `\n  ${e.field}: ${e.message}${e.field === 'header.x-sandbox-client' ? ' (--client sets it)' : ''}`).join('');
  return `the sandbox answered ${status}: ${envelope.message}${fields}`;
}

