/** The readiness report: the catalogue, the observer that judges requests and webhook attempts, grading, the provider operations' coverage, JUnit and HTML. */

export { catalogue } from './catalogue.js';
export { runChecks } from './checks.js';
export type { CheckMessages } from './checks.js';
export { gradeReport } from './grade.js';
export { htmlOf } from './html.js';
export { junitOf } from './junit.js';
export { coverageOf, operationCountKey } from './operations.js';
export type { Coverage, OperationCoverage, SpecOperation, StatusCoverage } from './operations.js';
export { ReportObserver } from './observer.js';
