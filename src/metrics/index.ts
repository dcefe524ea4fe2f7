export { SandboxMetrics } from './metrics.js';
