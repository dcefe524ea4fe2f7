import type { SandboxModule } from '../../http/index.js';
import type { Services } from '../services.js';
import { requestHandlers } from '../../http/index.js';
import { journalRecorder, PendingAppends } from '../../requests/index.js';

/** The request journal (`/__sandbox/requests`): what each client sent and what it got. */
export function requestsModule({ storage, options, logger, specs, registry }: Pick<Services, 'storage' | 'options' | 'logger' | 'specs' | 'registry'>): SandboxModule {
  const journal = storage.requests;
  const pending = new PendingAppends();
  return {
    name: 'requests',
    handlers: requestHandlers(journal, pending, specs.provider.operations),
    // A token repeated outside Authorization (a gateway's header, a query parameter) is redacted too, those the caller may hold.
    observeProvider: journalRecorder(journal, options.strict, logger, pending, (clientId, role, own) => registry.secretsOf(clientId, role, own)),
    reset: async (clientId) => {
      await pending.settled(clientId);
      return journal.clear(clientId);
    },
    prune: (olderThan, clientId) => journal.prune(olderThan, clientId),
  };
}
