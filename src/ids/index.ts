/** Order numbers, batch ids and AWBs: unique, random-looking, reproducible under a seed. */

export { IdFactory } from './factory.js';
export { draw, hash32, pick } from './random.js';
