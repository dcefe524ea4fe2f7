/**
 * How the event loop is shared between due jobs and requests. Background work holds the
 * loop in slices: it runs until its slice is spent, then lets in what waits (requests)
 * before it goes on. A slice of due jobs lasts as long as the loop's other work took
 * between two slices, from SLICE_MS to MAX_SLICE_MS, so under load due work and requests
 * share the loop about half and half; a slice of requests lasts MAX_SLICE_MS, so neither
 * side holds the loop much longer than the other.
 */
export const SLICE_MS = 5;
export const MAX_SLICE_MS = 15;

/**
 * Most requests of one client waiting for their turn, and most bytes of their bodies
 * together (a request with none waiting is taken whatever its size); past either, a new
 * one is refused with a 429. HTTP pipelining could otherwise queue any number of parsed
 * bodies: a waiting request holds its parsed body.
 */
export const WAITING_PER_CLIENT = { requests: 1_000, bytes: 32 * 2 ** 20 };

/**
 * Lets the event loop go (the requests waiting to be read, their turns) before going on:
 * what a long removal or sweep awaits between its units of work, so one client's reset
 * or a retention sweep does not hold every other client's requests for the whole of it.
 */
export const letRequestsIn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
