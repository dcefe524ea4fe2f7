import { Webhook } from 'standardwebhooks';
import { LISTENER_PREFIX, type Attempt } from '../records/index.js';
import { USER_AGENT, type SendResult } from './send.js';

/** One attempt handed to a listener: what the partner's machine POSTs to its local receiver. */
export interface RelayedAttempt {
  client_id: string;
  /** The listener's name (its endpoint's target). */
  listener: string;
  delivery_id: string;
  event: string;
  order_no: string | null;
  /** How long the local POST may take; the relay waits this plus a margin for the answer. */
  timeout_ms: number;
  /** The headers a direct delivery would send, signature included. */
  headers: Record<string, string>;
  /** The exact body a direct delivery would POST. */
  body: string;
  /** Set on a copy its chaos asked for once the message was acknowledged (see DeliveryAttempts.copies). */
  chaos?: 'duplicate' | 'bad_signature';
  /** Set on a step of the webhook checks (`POST /__sandbox/checks`): a message of no delivery, so its body goes with it wherever it is handed. */
  check?: string;
  /**
   * The endpoint's signing secret as the attempt is made (a forged signature's copy and a
   * check's wrong signing included): the listener says so when it is not the one it printed
   * as it connected, a rotation since. Absent when the replica holding the listener could not
   * read the endpoint as it took a hand-off (the attempt is sent all the same).
   */
  secret?: string;
}

/**
 * What a listener answered about an attempt, as a direct POST's outcome (no timestamp: the
 * relay's caller has it). Whether the receiver was asked is read from its error by
 * `reachedReceiver`.
 */
export type RelayResult = Omit<SendResult, 'webhook_timestamp'>;

/** A hand-off's outcome when the replica holding the listener stopped before the listener answered. */
export const HANDOFF_CUT = 'the replica holding the listener stopped before the listener answered';

/** The errors of a listener's attempt that say its receiver was not asked, or that nobody can say it was: the listen CLI's and the relay's own. */
const UNFORWARDED = new RegExp(`^(?:not forwarded: |the listener could not read this attempt|listener congested|listener disconnected|${HANDOFF_CUT}$)`);

/**
 * Whether an attempt reached a receiver (or may have): every direct one, and a listener's
 * unless its error says the listener did not forward it (its queue ran it out, it is
 * stopping, the connection went). One that did not is a failed attempt, retried on the
 * schedule, but nothing the readiness report can grade the receiver by.
 */
export const reachedReceiver = (attempt: Pick<Attempt, 'url' | 'status_code' | 'error'>): boolean =>
  !(attempt.url.startsWith(LISTENER_PREFIX) && attempt.status_code === null && attempt.error !== null && UNFORWARDED.test(attempt.error));

/**
 * The port through which the dispatcher reaches listeners (`shipping-sandbox listen`
 * sessions): the HTTP edge holds their connections and implements it. An attempt to a
 * listener that no process holds answers `not_connected`, and its delivery is held.
 * Undefined when the attempt was aborted by shutdown (it is then not recorded).
 */
export interface ListenerRelay {
  attempt(attempt: RelayedAttempt, shutdown: AbortSignal): Promise<RelayResult | 'not_connected' | undefined>;
  /** Whether a listener of this name of the client is connected to this process. */
  connectedHere(clientId: string, name: string): boolean;
  /** Whether it is connected to any process (best effort across replicas). */
  connected(clientId: string, name: string): Promise<boolean>;
  /** Closes the listener's connection, if one is held (its endpoint was removed). */
  removed(clientId: string, name: string): void;
}

/** The Standard Webhooks headers a direct delivery of `body` would carry at `sentAt`. */
export function signedHeaders(id: string, body: string, secret: string, sentAt: Date): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(id, sentAt, body),
  };
}
