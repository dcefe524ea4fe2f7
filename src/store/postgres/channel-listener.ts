import { CLOCKS_CHANNEL, type PgClocks } from './clocks.js';
import { JOBS_CHANNEL, type JobNotices } from './job-notices.js';
import { KeptListen } from './kept-listen.js';
import type { PostgresOptions } from './options.js';

/**
 * The replica's LISTEN connection: other replicas' news of scheduled jobs (to JobNotices)
 * and of moved clocks (to PgClocks). After a drop it listens again, trying with a growing
 * wait until the database answers (see KeptListen); meanwhile each replica's 5 s look for
 * due jobs goes on.
 */
export function channelListener(options: PostgresOptions, notices: JobNotices, clocks: PgClocks): KeptListen {
  return new KeptListen(options, () => [JOBS_CHANNEL, CLOCKS_CHANNEL], (message) => {
    if (message.channel === CLOCKS_CHANNEL) return clocks.notified(message.payload);
    notices.received(message.payload);
  });
}
