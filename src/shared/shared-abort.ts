import { setMaxListeners } from 'node:events';

/**
 * An AbortController whose signal every waiter of one kind listens to: the requests held
 * open by fault rules, the webhook attempts in flight, the listener relays' sends. Each
 * adds a listener while it waits and removes it when done, so the count is the waiters'
 * (bounded where they are admitted), not a leak: Node's warning past 10 listeners is off.
 */
export function sharedAbortController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}
