import type { Logger } from 'pino';
import { declaredPlainLength, type ServedRequest } from '../requests/served.js';
import type { RequestLogRepository } from '../store/index.js';
import type { JournalEntry } from '../records/index.js';
import { backgroundFailures, carriesSecret, CREDENTIAL_HEADERS } from '../shared/index.js';
import { reachOf, REDACTED, redactedBody, redactedPath, redactedText, textCarriesSecret } from './redaction.js';

/** The longest header value the journal keeps whole; a longer one is cut there and marked. */
export const JOURNAL_HEADER_CHARS = 512;

/** The most headers, and query parameters, the journal keeps of a request; past them, an entry named `…` says how many more there were. */
export const JOURNAL_FIELDS = 64;
/** The longest path the journal keeps whole. */
export const JOURNAL_PATH_CHARS = 2_048;
/** The name of the entry that counts the headers or parameters not kept. */
export const MORE = '…';

const cutTo = (value: string, chars: number): string => (value.length <= chars ? value : `${value.slice(0, chars)}… (${value.length} characters)`);
const cut = (value: string): string => cutTo(value, JOURNAL_HEADER_CHARS);
const cutAll = (value: string | string[]): string | string[] => (Array.isArray(value) ? value.slice(0, JOURNAL_FIELDS).map(cut) : cut(value));

const LOWERED = new WeakMap<readonly string[], readonly string[]>();
/** `secrets` in lower case, for names (a header's is in lower case), made once per list (the registry keeps its lists). */
function loweredOf(secrets: readonly string[]): readonly string[] {
  if (secrets.length === 0) return secrets;
  let lowered = LOWERED.get(secrets);
  if (lowered === undefined) LOWERED.set(secrets, (lowered = secrets.map((s) => s.toLowerCase())));
  return lowered;
}

/**
 * Up to JOURNAL_FIELDS of a request's headers or query parameters, each value at most
 * JOURNAL_HEADER_CHARS, secrets redacted. A request may carry 16 KiB of headers or query:
 * 2,000 tiny headers, or 1,400 parameters, made a thousand entries of one client hold 70-80 MB.
 */
function fieldsKept(fields: Record<string, unknown>, secrets: readonly string[], credential: (name: string) => boolean = () => false): Record<string, string | string[]> {
  const copy: Record<string, string | string[]> = {};
  let count = 0;
  const lowered = loweredOf(secrets);
  for (const name in fields) {
    const value = fields[name];
    if (typeof value !== 'string' && !Array.isArray(value)) continue;
    count += 1;
    if (count > JOURNAL_FIELDS) continue;
    const text = typeof value === 'string' ? value : (value as unknown[]).map(String);
    const kept = credential(name) || carriesSecret(text, secrets) ? REDACTED : cutAll(text);
    // A name may carry a token too (`?<token>`; a header's name in lower case): each such name redacted apart, none lost.
    const shown = lowered.length > 0 && carriesSecret(name.toLowerCase(), lowered) ? `${REDACTED} ${count}` : name;
    // `copy.__proto__ = …` would set no field: a parameter may be named so.
    if (shown === '__proto__') Object.defineProperty(copy, shown, { value: kept, enumerable: true, writable: true, configurable: true });
    else copy[shown] = kept;
  }
  if (count > JOURNAL_FIELDS) copy[MORE] = `${count - JOURNAL_FIELDS} more not kept`;
  return copy;
}

/** The largest body the journal keeps whole; of a larger one it keeps this much of its JSON text. */
export const JOURNAL_BODY_BYTES = 16_384;

/** The body as the journal keeps it: whole up to JOURNAL_BODY_BYTES, else an excerpt of its JSON and its size; `secrets` redacted (see redactedBody). */
function keptBody({ input, violations }: ServedRequest, secrets: readonly string[]): Pick<JournalEntry, 'body' | 'body_truncated'> {
  const body = input.body ?? null;
  // A body refused whole (not JSON, not UTF-8, nested too deep) is journaled as none, whatever its size.
  const raw = violations.some((violation) => violation.field === 'body') ? undefined : input.bodyBytes;
  // A large body refused unparsed (its verdict came from the worker thread) is kept as its excerpt.
  if (body === null && (raw === undefined || raw.length <= JOURNAL_BODY_BYTES)) return { body };
  if (raw !== undefined) {
    if (raw.length <= JOURNAL_BODY_BYTES) return { body: redactedBody(body, raw, secrets) };
    const sent = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
    return { body: excerpt((end) => sent.subarray(0, end).toString('utf8'), raw.length, secrets), body_truncated: { bytes: raw.length } };
  }
  // The size the client sent tells without serializing (not for a chunked or compressed body).
  if ((declaredPlainLength(input.headers) ?? Number.POSITIVE_INFINITY) <= JOURNAL_BODY_BYTES) return { body: redactedBody(body, undefined, secrets) };
  const text = JSON.stringify(body);
  const bytes = Buffer.byteLength(text);
  if (bytes <= JOURNAL_BODY_BYTES) return { body: redactedBody(body, undefined, secrets) };
  return { body: excerpt((end) => text.slice(0, end), text.length, secrets), body_truncated: { bytes } };
}

/**
 * The first JOURNAL_BODY_BYTES of a body's text, its secrets redacted before it is cut (so
 * none is cut in two), without a character cut in two. `read(end)` gives the text of its
 * first `end` units (bytes or characters) of `size`: only as much is read and searched as
 * the excerpt needs, a body may be megabytes. A token the read cut short is in its last
 * `reach` bytes, which the excerpt leaves out; if redaction shortened the text so far that
 * the excerpt would reach them, more is read.
 */
function excerpt(read: (end: number) => string, size: number, secrets: readonly string[]): string {
  const reach = reachOf(secrets);
  let end = JOURNAL_BODY_BYTES + reach;
  for (;;) {
    const text = read(end);
    if (!textCarriesSecret(text, secrets)) return head(Buffer.from(text));
    const shown = Buffer.from(redactedText(text, secrets));
    if (shown.length >= JOURNAL_BODY_BYTES + reach || end >= size) return head(shown);
    // At least doubled: a body of many long tokens is read a few times, not once per token.
    end = Math.max(end * 2, end + JOURNAL_BODY_BYTES + reach - shown.length);
  }
}

/** The first JOURNAL_BODY_BYTES of a text's bytes, without a character cut in two at the end. */
const head = (bytes: Buffer): string => bytes.subarray(0, JOURNAL_BODY_BYTES).toString('utf8').replace(/\uFFFD$/, '');

function entryOf(served: ServedRequest, secrets: readonly string[]): JournalEntry {
  const { input } = served;
  const kept = keptBody(served, secrets);
  // Built by assignment, in the order the API shows the fields: a spread in the middle
  // of an object literal takes V8's slow path, on every request.
  const entry = {
    id: served.seq,
    at: new Date(served.arrivedAt).toISOString(),
    method: served.method,
    path: cutTo(redactedPath(input.path, secrets), JOURNAL_PATH_CHARS),
    query: fieldsKept(served.query, secrets),
    operation_id: input.operation.operationId,
    headers: fieldsKept(input.headers, secrets, (name) => CREDENTIAL_HEADERS.has(name)),
    body: kept.body,
  } as JournalEntry;
  if (kept.body_truncated) entry.body_truncated = kept.body_truncated;
  entry.status = served.status;
  entry.duration_ms = served.durationMs;
  entry.violations = served.violations;
  entry.aborted = served.aborted;
  return entry;
}

/**
 * Journal appends still on their way, per client. Each starts as its request ends, so the
 * store gets them in the order the requests ended, and each store keeps them in the
 * order it got them (the PostgreSQL adapter writes a replica's appends one statement at
 * a time, in order, those made meanwhile together: chaining them here would leave it one
 * entry per statement). A client that reads its journal straight after a request must
 * still find that request there (read your own writes): reads wait for `settled`.
 */
export class PendingAppends {
  private readonly tails = new Map<string, Promise<void>>();

  /** Starts `append` at once; the client's tail now ends once it and every append before it have ended (failed ones too). */
  track(clientId: string, append: () => Promise<void>): void {
    const started = append().catch(() => undefined);
    const before = this.tails.get(clientId);
    const tail = before ? Promise.all([before, started]).then(() => undefined) : started;
    this.tails.set(clientId, tail);
    void tail.then(() => {
      if (this.tails.get(clientId) === tail) this.tails.delete(clientId);
    });
  }

  /** Resolves once every append of the client's started so far has ended (failed ones included). */
  async settled(clientId: string): Promise<void> {
    await this.tails.get(clientId);
  }
}

/**
 * Journals every authenticated provider request once its connection closes, and with
 * `--strict` logs one warning per field a request got wrong. Requests that fail
 * authentication have no client and are not journaled.
 */
export function journalRecorder(journal: RequestLogRepository, strict: boolean, logger: Logger, pending: PendingAppends, secretsOf: (clientId: string, role: ServedRequest['input']['role'], own: string | undefined) => readonly string[]): (served: ServedRequest) => void {
  const failed = backgroundFailures(logger);
  return (served) => {
    const client = served.input.client;
    if (!client) return;
    const authorization = served.input.headers.authorization;
    const own = typeof authorization === 'string' ? /^Bearer +(\S+)/i.exec(authorization)?.[1] : undefined;
    const secrets = secretsOf(client.id, served.input.role, own);
    // Runs on the connection's close: whatever goes wrong here must not escape as an uncaught exception.
    try {
      const entry = entryOf(served, secrets);
      pending.track(client.id, () => journal.append(client.id, entry).catch((err: unknown) => failed('request journal', err, 'requests were not journaled', { client: client.id })));
    } catch (err) {
      failed('request journal', err, 'requests were not journaled', { client: client.id });
    }
    if (!strict) return;
    const path = redactedPath(served.input.path, secrets);
    for (const { field, message } of served.violations) {
      logger.warn({ client: client.id, op: served.input.operation.operationId, field }, `spec violation in ${served.method} ${path}: ${field} ${message}`);
    }
  };
}
