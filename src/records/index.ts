/** The record types the storage port speaks, and pure functions over them. Imports nothing else of the project. */

export { DEFAULT_ENDPOINT, LISTENER_NAME, LISTENER_PREFIX, bareListenerName, listenerTarget } from './client-settings.js';
export type { ClientSettings, EndpointSetting, EndpointTarget, EventFilter, ExtraEndpoint } from './client-settings.js';
export type { ClientClock, KeptClocks, KeptRealClock, RealClockState } from './clock.js';
export type { Attempt, AttemptTrigger, AwbGeneratedPayload, ChaosMode, Delivery, DeliveryStatus, PingPayload, WebhookEventType, WebhookPayload } from './delivery.js';
export { SANDBOX_EVENT_TYPES } from './event.js';
export type { SandboxEvent, SandboxEventType } from './event.js';
export type { FaultAction, FaultMatch, FaultRule, FaultRuleInput } from './fault-rule.js';
export type { FieldError } from './field-error.js';
export { JOB_KINDS } from './job.js';
export type { ClaimedJob, Job, JobKind } from './job.js';
export type { ClaimOptions, ClockLead, DueFilter } from './job-query.js';
export type { JournalEntry } from './journal-entry.js';
export type { Meta } from './meta.js';
export { epochSeconds, isPlayedStep, orderIdentity, secondsOf } from './order.js';
export type { CreateOrderRequest, HistoryRecord, Order, OrderStatus, PlayedStep, TrackingEntry } from './order.js';
export type { DeliveryQuery, OrderQuery, RequestFilter } from './queries.js';
export { CONTENT_SEEN, MARKS_KEPT, MISSED_KEPT, PACT_RUN, RUN_MARK_PREFIXES, RUN_MARKS, SAME_SEEN, SEEN_ID_ACKNOWLEDGED, SEEN_ID_REFUSED, applyMarks, applyReportChange, emptyReport, isRunMark, isWaitingRetry, lastEvents, marksBeyond, missedKept } from './report.js';
export type { CheckResult, ReportChange, ReportEvent, ReportMark, ReportOutcome, ReportRun, ReportState, ReportView } from './report.js';
export type { Page, Stored, Unversioned } from './stored.js';
