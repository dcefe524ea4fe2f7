export { dashboardModule } from './dashboard.js';
export { docsModule } from './docs.js';
