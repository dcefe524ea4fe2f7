export { AWB_JOB, Journey } from './journey.js';
export { hasPodScan } from './pod-scan.js';
export { contextOf } from './render.js';
export { magicHistory, magicScenario, trackingOf, withPhotoUrls } from './view.js';
export { TrackingAnswers } from './answers.js';
export type { TrackingAnswer } from './answers.js';
