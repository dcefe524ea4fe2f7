import type { SandboxModule } from '../../http/index.js';
import type { Services } from '../services.js';
import { requestHandlers } from '../../http/index.js';
import { journalRecorder, PendingAppends } from '../../requests/index.js';

/** The request journal (`/__sandbox/requests`): what each client sent and what it got. */
export function requestsModule({ storage, options, logger, specs }: Pick<Services, 'storage' | 'options' | 'logger' | 'specs'>): SandboxModule {
  const journal = storage.requests;
  const pending = new PendingAppends();
  return {
    name: 'requests',
    handlers: requestHandlers(journal, pending, specs.provider.operations),
    observeProvider: journalRecorder(journal, options.strict, logger, pending),
    reset: async (clientId) => {
      await pending.settled(clientId);
      return journal.clear(clientId);
    },
    prune: (olderThan, clientId) => journal.prune(olderThan, clientId),
  };
}
