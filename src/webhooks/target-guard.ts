import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import type { LookupFunction } from 'node:net';
import type { Agent } from 'undici';
import { undici } from './undici.js';
import { checkAddress, checkUrl, literalHost, type Refusal, type TargetPolicy } from './targets.js';

/** The connection was not made: the policy refused the address the host resolved to. */
export class TargetRefused extends Error {
  override name = 'TargetRefused';
  readonly code = 'ERR_WEBHOOK_TARGET_REFUSED';
  constructor(readonly refusal: Refusal) {
    super(`refused by webhook target policy: ${refusal.message}`);
  }
}

/** `dns.lookup` with `all: true`, as the guard calls it (tests give a resolver of their own). */
export type Resolve = (host: string, options: LookupAllOptions, callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void;

/**
 * A `lookup` for `net.connect` that resolves every address of the host and refuses the
 * connection (before it is made) when the policy refuses any of them: the check is on
 * the addresses actually connected to, so a name that resolves elsewhere later (DNS
 * rebinding) gains nothing.
 */
export function checkingLookup(policy: TargetPolicy, resolve: Resolve): LookupFunction {
  return (host, options, callback) => {
    // The delivery log names the host, never the address it resolved to, and says the same
    // of a name that does not resolve: a partner must learn neither where the deployment's
    // internal names point nor which of them exist.
    const refused = (rule: Refusal['rule']) => new TargetRefused({ rule, message: `${host} does not resolve to an address the policy admits` });
    resolve(host, { ...options, all: true }, (error, addresses) => {
      // As the policy would refuse an address: a public policy by its address rule, an allow list as unlisted.
      if (error) return callback(refused(policy.kind === 'list' && !policy.public ? 'not_listed' : 'address'), '', 0);
      for (const { address } of addresses) {
        const refusal = checkAddress(policy, address, host);
        if (refusal) return callback(refused(refusal.rule), '', 0);
      }
      if (options.all) return (callback as unknown as (e: null, all: LookupAddress[]) => void)(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`no address for ${host}`), { code: 'ENOTFOUND' }), '', 0);
      callback(null, first.address, first.family);
    });
  };
}

/**
 * The webhook target policy of one sandbox (`--webhook-targets`): checks URLs set
 * through the API, and gives the HTTP dispatcher their attempts go through (an undici
 * Agent whose connections are checked on the resolved addresses). URLs the operator
 * configured are trusted (DESIGN): they go through an Agent without checks.
 */
export class TargetGuard {
  /** The Agents, made at first use (undici loads then). */
  private agents: { trusted: Agent; checked: Agent } | undefined;
  private closed = false;

  constructor(
    readonly policy: TargetPolicy,
    private readonly resolve: Resolve = dnsLookup as unknown as Resolve,
  ) {}

  /** Makes the Agents now (loading undici) unless closed: called once the sandbox listens, so that no attempt waits for it. */
  warmUp(): void {
    if (!this.closed) this.prepare();
  }

  /** The Agents, made at the first call. */
  private prepare(): { trusted: Agent; checked: Agent } {
    if (this.agents) return this.agents;
    if (this.closed) throw new Error('The webhook client is closed: the sandbox is stopping.');
    const { Agent } = undici();
    const trusted = new Agent();
    const checked = this.policy.kind === 'any' ? trusted : new Agent({ connect: { lookup: checkingLookup(this.policy, this.resolve) } });
    this.agents = { trusted, checked };
    return this.agents;
  }

  /** The refusal of a URL a client sets, or undefined when it is admitted. */
  checkUrl(url: string): Refusal | undefined {
    return checkUrl(this.policy, url);
  }

  /**
   * The dispatcher of one attempt, and the refusal when the URL's host is an address
   * literal the policy refuses (sockets skip the lookup for those, so they are checked
   * here, before anything connects).
   */
  route(url: string, trusted: boolean): { agent: Agent; refusal?: Refusal } {
    const agents = this.prepare();
    if (trusted || this.policy.kind === 'any') return { agent: agents.trusted };
    const literal = literalHost(url);
    return { agent: agents.checked, refusal: literal === undefined ? undefined : checkAddress(this.policy, literal) };
  }

  /** Closes the connections kept alive. */
  async close(): Promise<void> {
    this.closed = true;
    const agents = this.agents;
    if (!agents) return;
    await Promise.all([agents.trusted.destroy(), agents.checked === agents.trusted ? undefined : agents.checked.destroy()]);
  }
}
