import type { Logger } from 'pino';
import type { ClockSync } from '../clock/index.js';
import type { ClientRegistry } from '../clients/index.js';
import { claimLeaseMs, type ResolvedOptions } from '../config/index.js';
import { JobCannotRun, type SchedulerOptions } from '../jobs/index.js';
import type { SandboxMetrics } from '../metrics/index.js';
import { backgroundFailures } from '../shared/index.js';
import { droppedJob, unconfiguredJobs } from './job-messages.js';

/**
 * How the sandbox's scheduler runs its jobs. A claim outlasts the longest webhook attempt.
 * On the embedded store the jobs of a client the config no longer has are dropped as they
 * fall due. On a shared database the replicas' configs may differ while a change rolls out:
 * each replica looks for due jobs every few seconds (claims of a replica that died, missed
 * notices), and leaves the jobs of a client it lacks to the others for two of those looks
 * before it runs them itself (they fail without the client, are tried again, then dropped).
 */
export function schedulerOptions(options: ResolvedOptions, registry: ClientRegistry, logger: Logger, metrics: SandboxMetrics, sync: ClockSync | undefined): SchedulerOptions {
  const has = (client: string): boolean => client === '' || registry.byId(client) !== undefined;
  const pollMs = Math.min(5_000, options.jobLease / 4);
  const jobFailed = backgroundFailures(logger);
  const leaseMs = claimLeaseMs(options);
  if (options.databaseUrl !== undefined && leaseMs > options.jobLease) {
    logger.info({ job_lease_ms: options.jobLease, lease_ms: leaseMs }, `claims on due jobs hold ${leaseMs} ms, --webhook-timeout + 5 s, rather than the ${options.jobLease} ms of --job-lease: a claim outlasts an attempt, or another replica would take the job over and send its webhook again`);
  }
  return {
    leaseMs,
    ...(options.databaseUrl !== undefined ? { pollMs, has, leaveToOthersMs: 2 * pollMs } : { configured: has }),
    ...(sync ? { refreshClocks: () => sync.all() } : {}),
    // A job that names why it cannot run here (its client not configured) is one line, with its try: not a stack per try.
    onError: (err, kind, key, tried) =>
      err instanceof JobCannotRun ? logger.error({ kind, key, ...tried, error: err.message }, 'scheduled job failed') : jobFailed('scheduled job', err, 'jobs stay due and run once it is back', { kind, key, ...tried }),
    onDropped: (kind, key, client) => logger.error({ kind, key, client }, droppedJob(kind, key)),
    onUnconfigured: (client, dropped) => logger.warn({ client, dropped }, unconfiguredJobs(client, dropped)),
    onLate: (kind, lateMs) => metrics.jobRan(kind, lateMs),
  };
}
