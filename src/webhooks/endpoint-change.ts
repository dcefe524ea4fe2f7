import { createHash, randomUUID } from 'node:crypto';
import type { EndpointSetting, EventFilter, ExtraEndpoint } from '../records/index.js';
import { makeSecret } from './secret.js';
import { RuleViolation } from '../shared/index.js';

/** Endpoints a client may have besides its default one. */
export const MAX_ENDPOINTS = 20;

/** Why an endpoint disabled through the control API takes no deliveries. */
export const DISABLED_BY_API = 'disabled through the control API';

/** A new endpoint as the control API gives it (checked against the spec and the target policy before). */
export interface EndpointInput {
  url: string;
  secret?: string;
  events?: EventFilter;
  enabled?: boolean;
  description?: string;
}

/** A change of an endpoint; each field given replaces the one kept. `rotate_secret` makes a new secret. */
export interface EndpointPatch {
  url?: string;
  secret?: string;
  rotate_secret?: boolean;
  enabled?: boolean;
  events?: EventFilter;
  description?: string;
}

/**
 * The id of a client's `n`th created endpoint: reproducible under `--seed`, random
 * otherwise, and showing nothing of other clients.
 */
export function endpointId(clientId: string, n: number, seed: string | undefined): string {
  return `ep_${createHash('sha256').update(`${seed ?? randomUUID()}:endpoint:${clientId}:${n}`).digest('hex').slice(0, 20)}`;
}

/** Only the default endpoint, which always exists, may take no events (a client that only listens); another would be an endpoint for nothing. */
function checkTakesSome(events: EventFilter | undefined): void {
  if (events?.length === 0) throw new RuleViolation([{ field: 'events', message: 'must name at least one event (null for every event); only the default endpoint may take none' }]);
}

/** A new URL endpoint, enabled unless the input says otherwise. */
export function newEndpoint(id: string, input: EndpointInput, secret: string, at: number): ExtraEndpoint {
  checkTakesSome(input.events);
  const enabled = input.enabled ?? true;
  return {
    id,
    target: { type: 'url', url: input.url },
    secret: input.secret ?? secret,
    events: input.events ?? null,
    description: input.description ?? '',
    disabled_at: enabled ? null : at,
    disabled_reason: enabled ? null : DISABLED_BY_API,
    created_at: at,
    updated_at: at,
  };
}

/** The disabled fields after `enabled` was given (unchanged when it was not, or already so). */
function enabledFields(current: { disabled_at: number | null; disabled_reason: string | null }, enabled: boolean | undefined, at: number) {
  if (enabled === undefined || enabled === (current.disabled_at === null)) return { disabled_at: current.disabled_at, disabled_reason: current.disabled_reason };
  return enabled ? { disabled_at: null, disabled_reason: null } : { disabled_at: at, disabled_reason: DISABLED_BY_API };
}

/**
 * A secret for the patch: the one given, a new random one when asked to rotate (never one
 * derived from the seed: a rotation must give a secret no one could work out, and two
 * rotations at one clock time must differ), else undefined (kept).
 */
function secretOf(patch: EndpointPatch, clientId: string, id: string, _seed: string | undefined, _at: number): string | undefined {
  if (patch.secret !== undefined) return patch.secret;
  return patch.rotate_secret ? makeSecret(`${clientId}:${id}`) : undefined;
}

/** The 400 of a URL given to a listener endpoint. */
export const listenerTakesNoUrl = (): RuleViolation =>
  new RuleViolation([{ field: 'url', message: 'a listener endpoint has no URL: its deliveries go to its listen session' }], 'A listener endpoint takes no URL; add a URL endpoint instead.');

/** An extra endpoint with the patch applied. */
export function patchedEndpoint(endpoint: ExtraEndpoint, patch: EndpointPatch, clientId: string, seed: string | undefined, at: number): ExtraEndpoint {
  // A listener's target is its name: its deliveries go through its `listen` session, which a URL would silently cut off.
  if (endpoint.target.type === 'listener' && patch.url !== undefined) throw listenerTakesNoUrl();
  checkTakesSome(patch.events);
  const secret = secretOf(patch, clientId, endpoint.id, seed, at);
  return {
    ...endpoint,
    ...(patch.url !== undefined ? { target: { type: 'url', url: patch.url } } : {}),
    ...(secret !== undefined ? { secret } : {}),
    ...(patch.events !== undefined ? { events: patch.events } : {}),
    ...(patch.description !== undefined ? { description: patch.description } : {}),
    ...enabledFields(endpoint, patch.enabled, at),
    updated_at: at,
  };
}

/** The default endpoint's runtime setting with the patch applied. */
export function patchedSetting(setting: EndpointSetting, patch: EndpointPatch, clientId: string, seed: string | undefined, at: number): EndpointSetting {
  const secret = secretOf(patch, clientId, 'default', seed, at);
  return {
    ...setting,
    ...(patch.url !== undefined ? { url: patch.url } : {}),
    ...(secret !== undefined ? { secret } : {}),
    ...(patch.events !== undefined ? { events: patch.events } : {}),
    ...(patch.description !== undefined ? { description: patch.description } : {}),
    ...enabledFields(setting, patch.enabled, at),
    updated_at: at,
  };
}
