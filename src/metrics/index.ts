/** The counters and histograms of one sandbox, on its own Prometheus registry. */

export { exposition, SandboxMetrics } from './metrics.js';
