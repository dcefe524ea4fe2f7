/** One module per feature: what plugs it into the edge (handlers, interceptors, observers) and its reset, prune, start and close hooks. */

export { coverageModule } from './coverage.js';
export { faultsModule } from './faults.js';
export { metricsModule } from './metrics.js';
export { ordersModule } from './orders.js';
export { controlModule } from './control.js';
export { preferModule } from './prefer.js';
export { ratesModule } from './rates.js';
export { reportModule } from './report.js';
export { requestsModule } from './requests.js';
export { retentionModule } from './retention.js';
export { statesModule } from './states.js';
export { webhooksModule } from './webhooks.js';
