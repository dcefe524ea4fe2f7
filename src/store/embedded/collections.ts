/** Collections of the data file, one per kind of record. */
export const ORDERS = 'orders';
export const DELIVERIES = 'deliveries';
export const CLIENTS = 'clients';
export const COUNTERS = 'counters';
export const META = 'meta';
export const JOBS = 'jobs';

/** The key of a job: one job per kind and key. */
export const jobId = (kind: string, key: string): string => `${kind}:${key}`;
