import type { Stored } from './stored.js';

/** Kinds of due work. */
export type JobKind = 'awb' | 'step' | 'webhook' | 'endpoint-webhook' | 'webhook-recover' | 'retention' | 'listener-expiry';
/** Every kind of job. */
export const JOB_KINDS: readonly JobKind[] = ['awb', 'step', 'webhook', 'endpoint-webhook', 'webhook-recover', 'retention', 'listener-expiry'];

/** A due thing: run `kind` for `key` once the client's clock reaches `due_at`. */
export interface Job {
  kind: JobKind;
  /** The record it is about (an order number, a delivery id). One job per kind and key. */
  key: string;
  /** Whose clock `due_at` is on; '' for sandbox-wide work. */
  client_id: string;
  due_at: number;
}

/** A job taken by one worker until its lease ends (wall-clock ms). */
export interface ClaimedJob extends Stored<Job> {
  claimed_by: string;
  lease_until: number;
}
