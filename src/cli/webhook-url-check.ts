import type { Config } from '../config/schema.ts';

/**
 * Refuses a webhook URL whose host resolves to a private or reserved address, unless
 * webhooks.allowPrivateNetworks is set. Filled in by the SSRF guard (src/daemon/webhooks/ssrf-guard.ts).
 */
export async function checkWebhookUrlAllowed(_config: Config, _url: string): Promise<void> {}
