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
