/** Domain errors and small utilities every layer above may use. */

export { isCalendarDay } from './calendar.js';
export { formatDuration, parseDelayRange, parseDuration, unitlessNumber } from './duration.js';
export type { DelayRange } from './duration.js';
export { Conflict, DomainError, Forbidden, LimitReached, NotFound, RuleViolation, TooManyRequests, Unavailable, amountProblem, asRead, isTooManyEntries, tooManyEntries, MAX_AMOUNT, MAX_SIDE_CM, MAX_WEIGHT_KG, domainMessages, notACursor } from './errors.js';
export type { FieldError } from './errors.js';
export { mask } from './mask.js';
export { sharedAbortController } from './shared-abort.js';
export { shownDatabase } from './shown-database.js';
export { OneAtATime } from './one-at-a-time.js';
export { remembered } from './remembered.js';
export { VERSION } from './version.js';
export { WarningThrottle } from './warning-throttle.js';
export { backgroundFailures, firstOfWindow } from './background-failure.js';
export { letRequestsIn, MAX_SLICE_MS, SLICE_MS, WAITING_PER_CLIENT } from './loop-slices.js';
export { compileGlob, globMatches, globProblem } from './glob.js';
export { globReaches, operationsMeeting, unmatchableCriteria } from './operation-match.js';
export type { MatchableOperation, OperationCriteria } from './operation-match.js';
export type { CompiledGlob } from './glob.js';
export { fieldPathSteps, isFieldPath, valueAt } from './field-path.js';
export { carriesSecret, CREDENTIAL_HEADERS, decodedPath, secretFieldOf, secretsShown, TOKEN_IN_VALUE_MIN } from './credential-headers.js';
export { headerOf, headerText, unreadHeader } from './header-of.js';
export { isUsableToken } from './bearer.js';
export { BODY_ENCODINGS, charsetOf, declaresABody, isJsonType, isTakenContentType, isUtf8Charset } from './media-type.js';
export { retryAfterMs } from './retry-after.js';
export { BAD_RESPONSE, fetchFailure, oneLineError, readableFailure } from './network-error.js';
export { within } from './within.js';
export { isJsonObject } from './json-object.js';
