export { runReport } from './report.js';
