/** Whether an endpoint takes deliveries now: it has a URL and is enabled (else its deliveries are held or fail). */
export const takesDeliveries = (endpoint: { url?: string | null; enabled: boolean } | undefined): endpoint is { url: string; enabled: true } =>
  endpoint !== undefined && Boolean(endpoint.url) && endpoint.enabled;

/** Whether attempts to the endpoint can be made now: it takes deliveries, or it is an enabled listener (whose attempt then goes through the relay). */
export const takesAttempts = (endpoint: { url?: string | null; listener?: string | null; enabled: boolean } | undefined): boolean =>
  takesDeliveries(endpoint) || (endpoint !== undefined && typeof endpoint.listener === 'string' && endpoint.enabled);
