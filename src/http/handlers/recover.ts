import { Conflict, RuleViolation } from '../../shared/index.js';
import { clientOf, json, timeField, type HandlerMap } from '../handler.js';
import { takesAttempts, webhookMessages, type RecoverWindow, type WebhookDispatcher, type WebhookEndpoints } from '../../webhooks/index.js';
import type { Clocks } from '../../clock/index.js';

export interface RecoverHandlerDeps {
  clock: Clocks;
  endpoints: WebhookEndpoints;
  dispatcher: WebhookDispatcher;
  /** Whether a listener of the client is connected: a recover leaves out the deliveries of one that is not. */
  connected?: (clientId: string, name: string) => Promise<boolean>;
}

/** `POST /__sandbox/webhooks/recover`: one more attempt of every failed delivery of the caller in a window, queued. */
export function recoverHandlers({ clock, endpoints, dispatcher, connected }: RecoverHandlerDeps): HandlerMap {
  return {
    recoverWebhooks: async (input) => {
      const client = clientOf(input);
      const body = input.body as { since: string; until?: string };
      const window: RecoverWindow = { since: timeField('since', body.since) };
      if (body.until !== undefined) {
        window.until = timeField('until', body.until);
        if (window.until < window.since) throw new RuleViolation([{ field: 'until', message: 'must not be before since' }]);
      }
      // As a redelivery: the attempts need a live endpoint (else they would fail at once, each using one up).
      // Each delivery goes to the endpoint it went to; with none live, say why of the default one.
      if (!(await endpoints.list(client)).some(takesAttempts)) {
        const endpoint = await endpoints.of(client);
        throw new Conflict(endpoint.url ? webhookMessages.disabled(endpoint.disabled_reason) : webhookMessages.noUrl);
      }
      const { queued, skipped } = await dispatcher.recover(client.id, window, connected);
      const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());
      return json(202, { queued, skipped, since: iso(window.since), until: iso(window.until), now: iso(clock.of(client.id)) });
    },
  };
}
