import type { FieldError } from './field-error.js';

/** One provider request of a client, as `GET /__sandbox/requests` shows it. */
export interface JournalEntry {
  /** Increases with arrival; entries are listed in this order. */
  id: number;
  /** When the request arrived, on the sandbox clock (ISO 8601). */
  at: string;
  method: string;
  path: string;
  query: Record<string, unknown>;
  operation_id: string;
  /** Request headers, with Authorization redacted. */
  headers: Record<string, string | string[]>;
  /** The parsed JSON body, or null when there was none; above 16 KiB, the first 16 KiB of its JSON text (see body_truncated). */
  body: unknown;
  /** Set when the body was larger than the journal keeps: its size in bytes as JSON. */
  body_truncated?: { bytes: number };
  /** The status answered, or null when no status line was sent (reset, hang). */
  status: number | null;
  /** From arrival until the answer ended or the connection closed (real milliseconds). */
  duration_ms: number;
  /** The field errors of the 400 the request was rejected with: what it got wrong. */
  violations: FieldError[];
  /** True when the connection closed before the answer ended (a fault, or the client gave up). */
  aborted: boolean;
}
