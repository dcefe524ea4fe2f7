/** Whether an endpoint takes deliveries now: it has a URL and is enabled (else its deliveries are held or fail). */
export const takesDeliveries = (endpoint: { url?: string | null; enabled: boolean } | undefined): endpoint is { url: string; enabled: true } =>
  endpoint !== undefined && Boolean(endpoint.url) && endpoint.enabled;
