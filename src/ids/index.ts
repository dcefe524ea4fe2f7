export { IdFactory } from './factory.js';
export { draw, hash32, pick } from './random.js';
