import type { FieldError } from '../records/index.js';

export type { FieldError };

/**
 * What domain code throws. It knows nothing of HTTP: the edge (`http/errors.ts`, `toApiError`)
 * maps each kind to its status and the error envelope, in one place.
 */
export abstract class DomainError extends Error {
  constructor(
    message: string,
    readonly errors: FieldError[] = [],
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** The record does not exist for this client (another client's record included). */
export class NotFound extends DomainError {
  constructor(message: string = domainMessages.notFound) {
    super(message);
  }
}

/** The client is known but may not do this (read-only, a courier it is not enabled for). */
export class Forbidden extends DomainError {}

/** The request breaks a rule beyond the schema; `errors` names every field at fault. */
export class RuleViolation extends DomainError {
  constructor(errors: FieldError[], message: string = domainMessages.invalidRequest) {
    super(message, errors);
  }
}

/** A listing's `cursor` that is not one of its pages' next_cursor: every store's listings and the sealed cursor say it alike. */
export const notACursor = (): RuleViolation =>
  new RuleViolation([{ field: 'cursor', message: 'is not a cursor of this listing: pass the next_cursor of the previous page' }]);

/** The record is not in a state that allows this (no AWB yet, a disabled endpoint, a stale version). */
export class Conflict extends DomainError {}

/** A bound was reached (too many fault rules, for example). */
export class LimitReached extends DomainError {}

/** The client sent more requests than it may in this time (`--rate-limit`): try again after `retryAfterSeconds`. */
export class TooManyRequests extends DomainError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
  }
}

/** The store cannot take the change now (disk full, read-only file system): try again later. */
export class Unavailable extends DomainError {
  constructor(
    message: string,
    readonly retryAfterSeconds = 5,
    /**
     * What a request that only reads (GET, HEAD) is told instead, when the failure is the
     * store's and not of saving: `message` speaks of saving, which such a request never asked for.
     */
    readonly readMessage?: string,
  ) {
    super(message);
  }
}

/**
 * `error` as work that only read is told it: an Unavailable with a read wording (see
 * readMessage) says that it could not read, not that nothing was saved.
 */
export const asRead = (error: unknown): unknown =>
  error instanceof Unavailable && error.readMessage !== undefined ? new Unavailable(error.readMessage, error.retryAfterSeconds, error.readMessage) : error;

/**
 * The largest amount (a value or COD in rupiah, a quantity) the sandbox takes: the
 * provider states none, and without a bound a long enough numeric text reads as
 * Infinity, answered as null where the spec promises integers.
 */
export const MAX_AMOUNT = 999_999_999_999;

/**
 * The heaviest parcel the sandbox prices, in kg; the provider states no maximum.
 * With MAX_SIDE_CM it bounds the chargeable weight, which the shipping fee multiplies
 * (rate per kg × kg × the service's multiplier): at most 166,666,667 kg (10,000³ / 6000),
 * which the dearest service of the fixtures (34,000 per kg × 1.8) charges about 1.0e13
 * rupiah. Every fee, and the figures it is computed from (100 times as large), thus stays
 * a whole number that JSON and a double hold exactly (below 2^53).
 */
export const MAX_WEIGHT_KG = 1_000_000;

/** The longest side (length, width or height) of a parcel the sandbox prices, in cm: see MAX_WEIGHT_KG. */
export const MAX_SIDE_CM = 10_000;

/**
 * A field error when numeric `text` is above `max` (`unit` names what it counts), else undefined.
 *
 * @example amountProblem('items[0].item_width', '10001', MAX_SIDE_CM, 'cm') // { field: 'items[0].item_width', message: 'must be at most 10000 cm' }
 */
export function amountProblem(field: string, text: string | undefined, max = MAX_AMOUNT, unit = ''): FieldError | undefined {
  return text !== undefined && !(Number(text) <= max) ? { field, message: domainMessages.tooLarge(max, unit) } : undefined;
}

/** What a field error says of a list longer than the spec lets it be. */
export const tooManyEntries = (limit: number): string => `must hold at most ${limit} ${limit === 1 ? 'entry' : 'entries'}`;
/** Whether a field error's message is `tooManyEntries`'s. */
export const isTooManyEntries = (message: string): boolean => /^must hold at most \d+ entr(y|ies)$/.test(message);

/** The messages domain code answers with, in one place. */
export const domainMessages = {
  /** A webhook secret that is not one, in the API's 400 and in the spec's pattern's message. */
  webhookSecret: 'must be "whsec_" followed by the standard base64 of 24 to 64 bytes, with its "=" padding',
  notFound: 'Record Not Found',
  /** The control API's 404s name the record they did not find (the provider's say `Record Not Found`). */
  orderNotFound: (orderNo: string) => `Order ${orderNo} not found.`,
  /** An order whose scenario file was removed since it was made: it keeps what it played, and plays nothing more. */
  scenarioGone: (orderNo: string, scenario: string) =>
    `Order ${orderNo} follows scenario ${scenario}, which the sandbox's scenarios no longer hold (its file was removed since the order was made): the order keeps its history so far and plays no further step. Create an order with another scenario for a journey.`,
  deliveryNotFound: (id: string) => `No webhook delivery ${id} for this client; GET /__sandbox/webhooks/deliveries lists them.`,
  /** A field or parameter that is required and absent. */
  isRequired: 'is required',
  /** A time that has a time's form but no clock reads (a leap second, `23:59:60Z`). */
  unreadableTime: 'is not a time the sandbox can read: use ISO 8601, e.g. 2026-01-01T00:00:00Z',
  /** A text parameter given twice, or in a bracketed form (`?a=1&a=2`, `?a[]=1`). */
  givenOnce: 'must be given once, as plain text',
  /** A query parameter a control call does not take: a misspelt filter would answer for everything. */
  notAParameter: (takes: Iterable<string>) => {
    const names = [...takes];
    return `is not a parameter of this call (${names.length === 0 ? 'it takes none' : `it takes ${names.join(', ')}`})`;
  },
  tooLarge: (max: number, unit: string) => `must be at most ${max}${unit === '' ? '' : ` ${unit}`}`,
  invalidRequest: 'The request is not valid; see errors.',
  readOnly: 'This token is read-only: it may read (GET) but not create or change anything.',
  courierNotEnabled: (code: string) => `This client is not enabled for courier "${code}".`,
  staleVersion: (what: string) => `${what} was changed by another request meanwhile; read it again and retry.`,
  rateLimited: (perSecond: number, seconds: number, admins = false) =>
    `${admins ? 'The admin tokens (counted together)' : 'This client'} sent more than ${perSecond} requests in a second (the sandbox's --rate-limit); retry in ${seconds} s.`,
  unsupportedMediaType: (got: string) =>
    `The body must be sent as application/json (got "${got}"); set the header "Content-Type: application/json".`,
  bodyTooLarge: (limit: string) => `The body is larger than this sandbox's limit of ${limit}; send a smaller one, for example fewer items per request.`,
  headersTooLarge: (limit: number) =>
    `The request headers are larger than the limit of ${limit} bytes; send shorter headers (or start the sandbox with a larger --max-header-size).`,
  tooManyWaiting: (requests: number, bytes: number) =>
    `This client has as many requests waiting for their turn as it may have (at most ${requests}, with ${bytes / 2 ** 20} MiB of bodies together; requests of several clients are served in turns); retry in 1 s, or send fewer at once.`,
  tooManyBodiesReading: (most: number) =>
    `This token is sending as many request bodies at once as the sandbox reads for one token (${most}; a body counts until its last byte has come or its connection ends): this one was not read. Retry in 1 s, once a body sent before it has arrived.`,
  listingsBusy: (waitedMs: number, perLane: number) =>
    `This replica runs ${perLane} of a client's listings at once, and this one waited ${waitedMs / 1000} s for its turn behind the others (more listings at once than it can take). Retry shortly.`,
  storeBusy: (waitedMs: number) =>
    `Every database connection of this sandbox replica stayed busy for ${waitedMs / 1000} s (more load than it can take, or statements waiting on a lock). Retry shortly.`,
  storeUnavailable: (reason: string) => `The sandbox cannot save changes right now (${reason}); nothing was saved. Retry shortly.`,
  resetStopped:
    'The reset stopped part-way: the store could not take all of its changes (away or busy; GET /__sandbox/health says so when it is away). Some of what it removes may be removed already; run it again shortly, and it removes the rest.',
  storeUnreadable: (reason: string) => `The sandbox cannot read from its database right now (${reason}). Retry shortly.`,
  stopping: (what: 'requests' | 'listeners') =>
    `The sandbox is stopping${what === 'requests' ? ' (SIGTERM or SIGINT)' : ''}: it takes no new ${what}. Retry: behind a proxy another replica answers; else once it has started again.`,
  lockLost: "This sandbox no longer holds the lock of its data file (ELOCKLOST), so it saves nothing more; nothing was saved. Its log and /__sandbox/health say why (most often another sandbox took the data file over).",
} as const;
