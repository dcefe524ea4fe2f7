export { performFault } from './fault-actions.js';
export { preferInterceptor } from './prefer.js';
