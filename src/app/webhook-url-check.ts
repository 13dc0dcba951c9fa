import type { Config } from '../config/schema.ts';
import { resolveAllowed, type Resolver, SsrfError, systemResolver } from '../webhooks/ssrf-guard.ts';
import { UsageError } from '../domain/errors.ts';

const RESOLVE_TIMEOUT_MS = 5000;

/**
 * Refuses a webhook URL whose host is, or resolves to, a private or reserved address, unless
 * webhooks.allowPrivateNetworks is set (UsageError: exit code 2). A name that does not resolve
 * now is accepted with a warning: DNS may be set up later, and every delivery checks again.
 */
export async function checkWebhookUrlAllowed(
  config: Config,
  url: string,
  options: { resolver?: Resolver; warn?: (message: string) => void } = {},
): Promise<void> {
  if (config.webhooks.allowPrivateNetworks) return;
  const host = new URL(url).hostname;
  const warn = options.warn ?? ((message: string) => process.stderr.write(`chaingate: warning: ${message}\n`));
  const resolver = options.resolver ?? systemResolver;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error('DNS lookup timed out'), { code: 'ETIMEOUT' })), RESOLVE_TIMEOUT_MS);
  });
  try {
    await Promise.race([resolveAllowed(host, resolver), timeout]);
  } catch (err) {
    if (err instanceof SsrfError) throw new UsageError(`webhook URL ${url} is ${err.message}`);
    const code = (err as NodeJS.ErrnoException).code ?? (err instanceof Error ? err.message : String(err));
    warn(`webhook host ${host} cannot be resolved now (${code}); it is checked again at every delivery`);
  } finally {
    clearTimeout(timer);
  }
}
