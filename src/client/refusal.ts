/** The sandbox's error envelope, as far as a refusal is told to the user. */
interface Envelope {
  message?: string;
  errors?: Array<{ field: string; message: string }>;
}

/**
 * A refusal of the sandbox as a client command prints it: the status and the envelope's
 * message and field errors, or the start of a body that is not one; a field error about
 * `header.x-sandbox-client` says which flag sets it.
 */
export function refusal(status: number, text: string): string {
  let envelope: Envelope | undefined;
  try {
    envelope = JSON.parse(text) as Envelope;
  } catch {
    envelope = undefined;
  }
  if (envelope?.message === undefined) return `the sandbox answered ${status}${text.trim() ? `: ${text.trim().slice(0, 300)}` : ''}`;
  const fields = (envelope.errors ?? []).map((e) => `\n  ${e.field}: ${e.message}${e.field === 'header.x-sandbox-client' ? ' (--client sets it)' : ''}`).join('');
  return `the sandbox answered ${status}: ${envelope.message}${fields}`;
}

