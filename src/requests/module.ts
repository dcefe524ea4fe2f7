import type { SandboxModule } from '../module.js';
import type { Services } from '../services.js';
import { requestHandlers } from './handlers.js';
import { RequestJournal } from './journal.js';
import { journalRecorder } from './recorder.js';

/** The request journal (`/__sandbox/requests`): what each client sent and what it got. */
export function requestsModule(services: Services): SandboxModule {
  const journal = new RequestJournal(services.options.journalSize);
  return {
    name: 'requests',
    handlers: requestHandlers(journal),
    observeProvider: journalRecorder(journal, services.options.strict, services.logger),
    reset: (clientId) => journal.clear(clientId),
    prune: (olderThan) => journal.prune(olderThan),
  };
}
