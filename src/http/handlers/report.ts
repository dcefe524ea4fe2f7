import { Conflict, NotFound, RuleViolation, TooManyRequests } from '../../shared/index.js';
import { clientOf, json, type HandlerMap } from '../handler.js';
import type { Storage } from '../../store/index.js';
import { webhookMessages, type ListenerRelay, type WebhookEndpoints, type TargetGuard } from '../../webhooks/index.js';
import { DEFAULT_ENDPOINT, PACT_RUN, type AwbGeneratedPayload } from '../../records/index.js';
import { catalogue, runChecks, type CheckMessages, gradeReport, htmlOf, junitOf } from '../../report/index.js';
import type { ReportObserver, SpecOperation } from '../../report/index.js';

export interface ReportHandlerDeps {
  storage: Storage;
  /** The client's clock (sandbox epoch ms). */
  now: (clientId: string) => number;
  endpoints: WebhookEndpoints;
  guard: TargetGuard;
  timeoutMs: number;
  observer: ReportObserver;
  shutdown: AbortSignal;
  /** The provider spec's operations, whose coverage the report shows. */
  operations: readonly SpecOperation[];
  /** How the checks reach a listener endpoint (its listen session), once the webhooks module made it. */
  relay?: () => Pick<ListenerRelay, 'attempt'> | undefined;
  /** How many resets of the client this process has run: a check run that saw one end records nothing. */
  resets?: (clientId: string) => number;
}

const seconds = (ms: number): number => Math.floor(ms / 1000);

const CHECK_RUNNING = 'A check run of this client is still going (one at a time: each step may wait the webhook timeout); retry once it has ended.';
const RESET_DURING_CHECKS =
  'The client was reset during this check run: its results, of the endpoint as it was before the reset, are not recorded in the new report. Run the checks again.';

/**
 * The checks' messages: the valid one about the client's latest order with an AWB (made up
 * when it has none), the unknown one about an order no client has. Made-up ones look like
 * real ones (12-digit numbers, a courier code and an AWB as JNE's), so a receiver that
 * checks the format still judges what the step is about.
 */
async function checkMessages(storage: Storage, clientId: string, now: number): Promise<CheckMessages> {
  const latest = (await storage.orders.list(clientId, { limit: 50 })).items.find((o) => o.awb !== null);
  const made = (orderNo: string, code: string): AwbGeneratedPayload => ({
    event: 'awb.generated',
    batch_id: `98${orderNo.slice(2)}`,
    order_no: orderNo,
    order_code: code,
    courier_code: 'jne',
    awb: `JN${orderNo.slice(2)}`,
    generated_at: seconds(now),
  });
  const valid = latest
    ? { event: 'awb.generated' as const, batch_id: latest.batch_id, order_no: latest.order_no, order_code: latest.item.order_code, courier_code: latest.courier_code, awb: latest.awb!, generated_at: seconds(latest.awb_generated_at ?? now) }
    : made('990000000001', 'readiness-check');
  return { valid, unknown: made('990000000000', 'unknown-to-the-client') };
}

/** The readiness report in the control API: the report, runs, checks. */
export function reportHandlers(deps: ReportHandlerDeps): HandlerMap {
  const { storage, now, observer } = deps;
  /** Clients with a check run going. */
  const running = new Set<string>();
  return {
    getReport: async (input) => {
      const client = clientOf(input);
      await observer.settled(client.id);
      const report = gradeReport(catalogue(), await storage.reports.get(client.id), now(client.id), deps.operations);
      const format = (input.query.format as string | undefined) ?? 'json';
      if (format === 'junit') return { status: 200, serialized: junitOf(report), type: 'application/xml; charset=utf-8' };
      if (format === 'html') return { status: 200, serialized: htmlOf(report), type: 'text/html; charset=utf-8', headers: { 'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'" } };
      return json(200, report);
    },

    startRun: async (input) => {
      const client = clientOf(input);
      const { name } = input.body as { name: string };
      // The name a Pact verification's provider states give their run: `report` refuses to grade such a run.
      if (name === PACT_RUN) throw new RuleViolation([{ field: 'name', message: `"${PACT_RUN}" is the run a Pact verification's provider states start; name your run otherwise, e.g. by its CI job` }]);
      await observer.settled(client.id);
      const run = { name, started_at: now(client.id), started_wall: Date.now() };
      await storage.reports.start(client.id, run);
      return json(201, { name, started_at: new Date(run.started_at).toISOString() });
    },

    runChecks: async (input) => {
      const client = clientOf(input);
      // One run per client at a time: each step may hold a connection for the webhook
      // timeout, and hundreds of runs at a silent receiver held a connection each.
      if (running.has(client.id)) throw new TooManyRequests(CHECK_RUNNING, 1);
      running.add(client.id);
      const id = (input.query.endpoint_id as string | undefined) ?? DEFAULT_ENDPOINT;
      const resets = deps.resets?.(client.id);
      let checks: Awaited<ReturnType<typeof runChecks>>;
      try {
        const endpoint = await deps.endpoints.get(client, id);
        if (!endpoint) throw new NotFound(webhookMessages.noEndpoint(id));
        const messages = await checkMessages(storage, client.id, now(client.id));
        const relay = deps.relay?.();
        checks = await runChecks(endpoint, messages, { clientId: client.id, guard: deps.guard, timeoutMs: deps.timeoutMs, now: () => now(client.id), shutdown: deps.shutdown, current: () => deps.endpoints.get(client, id), ...(relay ? { relay } : {}) });
      } finally {
        running.delete(client.id);
      }
      await observer.settled(client.id);
      if (deps.resets?.(client.id) !== resets) throw new Conflict(RESET_DURING_CHECKS);
      await storage.reports.change(client.id, { checks });
      return json(200, { endpoint_id: id, checks, passed: checks.filter((c) => c.status === 'passed').length, failed: checks.filter((c) => c.status === 'failed').length, not_run: checks.filter((c) => c.status === 'not_run').length });
    },
  };
}
