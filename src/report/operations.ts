import type { ReportView } from '../records/index.js';

/**
 * An operation of the provider spec as the coverage lists it: what it is and the
 * statuses the spec documents for it.
 */
export interface SpecOperation {
  operationId: string;
  method: string;
  path: string;
  statuses: readonly number[];
}

/** One status of an operation: how many of the run's requests were answered with it. */
export interface StatusCoverage {
  status: number;
  /** False for a status the spec does not document that the run was answered with anyway (a fault rule's 500). */
  documented: boolean;
  exercised: number;
}

export interface OperationCoverage {
  operation_id: string;
  method: string;
  path: string;
  /** The run's requests to it, whatever their status. */
  exercised: number;
  /** Documented statuses first (in the spec's order), then any other answered. */
  statuses: StatusCoverage[];
}

/**
 * Which operations of the provider spec, and which of their documented statuses, a run
 * exercised, as Specmatic's API coverage report shows them. `percent` is documented
 * (operation, status) pairs exercised / all documented pairs.
 */
export interface Coverage {
  summary: { operations: number; operations_exercised: number; statuses: number; statuses_exercised: number; percent: number };
  operations: OperationCoverage[];
}

const PREFIX = 'operation:';

/**
 * The report's count key of one request answered: `operation:<operationId>:<status>`.
 * Kept among the catalogue's counts (never derived from the bounded event log), so it
 * is exact for the whole run.
 */
export const operationCountKey = (operationId: string, status: number): string => `${PREFIX}${operationId}:${status}`;

/** The statuses each operation was answered with in the run, from the report's counts. */
function answered(counts: ReportView['counts']): Map<string, Map<number, number>> {
  const byOperation = new Map<string, Map<number, number>>();
  for (const [key, n] of Object.entries(counts)) {
    if (!key.startsWith(PREFIX)) continue;
    const cut = key.lastIndexOf(':');
    const operationId = key.slice(PREFIX.length, cut);
    const status = Number(key.slice(cut + 1));
    const statuses = byOperation.get(operationId) ?? new Map<number, number>();
    statuses.set(status, n);
    byOperation.set(operationId, statuses);
  }
  return byOperation;
}

/** Every operation of the spec with its documented statuses, each with how often the run was answered with it. */
export function coverageOf(operations: readonly SpecOperation[], counts: ReportView['counts']): Coverage {
  const seen = answered(counts);
  let documented = 0;
  let documentedExercised = 0;
  const listed = operations.map((op): OperationCoverage => {
    const got = seen.get(op.operationId) ?? new Map<number, number>();
    const statuses: StatusCoverage[] = op.statuses.map((status) => ({ status, documented: true, exercised: got.get(status) ?? 0 }));
    for (const [status, exercised] of [...got].sort(([a], [b]) => a - b)) if (!op.statuses.includes(status)) statuses.push({ status, documented: false, exercised });
    documented += op.statuses.length;
    documentedExercised += statuses.filter((s) => s.documented && s.exercised > 0).length;
    return { operation_id: op.operationId, method: op.method.toUpperCase(), path: op.path, exercised: [...got.values()].reduce((a, b) => a + b, 0), statuses };
  });
  return {
    summary: {
      operations: listed.length,
      operations_exercised: listed.filter((op) => op.exercised > 0).length,
      statuses: documented,
      statuses_exercised: documentedExercised,
      percent: documented === 0 ? 0 : Math.round((documentedExercised / documented) * 10_000) / 100,
    },
    operations: listed,
  };
}
