/** The HTTP edge: express, the request pipeline, the route table, the handlers, the error envelope, the pages. */

export { callerOn } from './auth.js';
export { answerClientErrors, endConnection, hostRequired } from './client-error.js';
export { capConnections } from './connection-cap.js';
export { cors } from './cors.js';
export { errorEnvelope, jsonBody, requestLog, series, unknownPath, withEnvelope } from './edge.js';
export { continueWhenRead } from './continue.js';
export { ApiError, messages } from './errors.js';
export type { HandlerMap, Interceptor, OperationInput, Reply } from './handler.js';
export { ShippingFeeStream, assumedOrderHandlers, chaosHeaderCheck, providerChecks, controlHandlers, coverageHandlers, faultHandlers, orderHandlers, rateHandlers, recoverHandlers, reportHandlers, requestHandlers, stateHandlers, webhookHandlers } from './handlers/index.js';
export type { StreamStats } from './handlers/index.js';
export type { SandboxModule } from './module.js';
export { mountSpec } from './mount.js';
export { dashboardModule, docsModule } from './pages/index.js';
export { MAX_HELD_PER_CLIENT, faultInterceptor, preferInterceptor } from './pipeline/index.js';
export { clientRateLimit } from './rate-limit.js';
export { noteOfResponse } from './response-notes.js';
export { ROUTES, accessOf, routedHandlers } from './routes.js';
export type { Access, Route, SpecName } from './routes.js';
export { checkAdminOnly } from './roles.js';
export { specAnswer } from './spec-answer.js';
export { FairTurns } from './turns.js';
export { largeBodiesFor } from './large-bodies.js';
export { ListenServer } from './listen.js';
export { LISTEN_ANSWER_MARGIN_MS, LISTEN_PATH } from './listen-protocol.js';
export { ListenOpens } from './listen-handshake.js';
export { CursorSeal } from './sealed-cursor.js';
