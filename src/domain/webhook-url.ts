import { UsageError } from './errors.ts';

/** Shape check of a merchant webhook URL; the network-level SSRF guard runs at delivery time too. */
export function parseWebhookUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`webhook URL ${JSON.stringify(value)} is not an absolute URL (expected https://…)`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new UsageError(`webhook URL must use https (or http), not ${url.protocol.replace(':', '')}`);
  }
  if (url.username || url.password) throw new UsageError('webhook URL must not carry credentials; the signature authenticates deliveries');
  if (value.length > 2048) throw new UsageError('webhook URL is longer than 2048 characters');
  url.hash = '';
  return url.toString();
}
