import type { SandboxModule } from '../module.js';
import type { Services } from '../services.js';
import { requestHandlers } from './handlers.js';
import { journalRecorder } from './recorder.js';

/** The request journal (`/__sandbox/requests`): what each client sent and what it got. */
export function requestsModule({ storage, options, logger }: Pick<Services, 'storage' | 'options' | 'logger'>): SandboxModule {
  const journal = storage.requests;
  return {
    name: 'requests',
    handlers: requestHandlers(journal),
    observeProvider: journalRecorder(journal, options.strict, logger),
    reset: (clientId) => journal.clear(clientId),
    prune: (olderThan) => journal.prune(olderThan),
  };
}
