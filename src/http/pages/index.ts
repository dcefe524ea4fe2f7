/** Pages outside both specs: the Swagger UI at /docs and the dashboard at /dashboard. */

export { dashboardModule } from './dashboard.js';
export { docsModule } from './docs.js';
