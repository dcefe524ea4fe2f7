/** The counters and histograms of one sandbox, on its own Prometheus registry. */

export { SandboxMetrics } from './metrics.js';
