/** One frozen empty array for every empty list of a stored record (an order's history, a delivery's attempts). */
export const EMPTY: readonly never[] = Object.freeze([]);

/** The shared empty array for an empty array, else the value itself. */
export const emptied = (value: unknown): unknown => (Array.isArray(value) && value.length === 0 ? EMPTY : value);
