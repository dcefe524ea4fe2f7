/** Tracking: the journey of an order through its scenario, rendered history, the tracking answer and its caches, POD photos. */

export { AWB_JOB, Journey, STEP_JOB } from './journey.js';
export { hasPodScan } from './pod-scan.js';
export { contextOf } from './render.js';
export { magicHistory, magicScenario, trackingOf, withPhotoUrls } from './view.js';
export { plausibleTracking, rebasedPhotos } from './plausible.js';
export { TrackingAnswers } from './answers.js';
export type { TrackingAnswer } from './answers.js';
