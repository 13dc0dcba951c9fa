import type { Common } from '../common.ts';
import { CHAIN_DEFAULTS } from '../chains/chain-defaults.ts';
import { CHAIN_SLUGS, type ChainSlug } from '../chains/slugs.ts';
import { UsageError } from '../domain/errors.ts';
import { parseWebhookUrl } from '../domain/webhook-url.ts';
import type { AuditInput } from '../store/audit-log.ts';
import { createMerchant, rotateSecret, updateMerchant, type MerchantChanges, type MerchantRecord } from '../store/merchants.ts';
import { checkWebhookUrlAllowed } from './webhook-url-check.ts';

// Merchant point set-up: the one path by which `chaingate merchant …` and the dashboard create and
// change a point (docs/dashboard.md#account-setup). Input checks live here so both refuse alike.

export function checkName(value: string): string {
  const name = value.trim();
  if (!name) throw new UsageError('the name must not be empty');
  if (name.length > 255) throw new UsageError('the name is longer than 255 characters');
  return name;
}

export function checkChains(values: readonly string[]): string[] {
  const chains = [...new Set(values.map((s) => s.trim()).filter(Boolean))];
  if (chains.length === 0) throw new UsageError('at least one chain slug is needed');
  const unknown = chains.filter((c) => !(CHAIN_SLUGS as readonly string[]).includes(c));
  if (unknown.length) throw new UsageError(`unknown chain slug(s): ${unknown.join(', ')} (known: ${CHAIN_SLUGS.join(', ')})`);
  return chains;
}

/** The coins a chain carries (native first). */
export function coinsOf(chain: ChainSlug): string[] {
  const d = CHAIN_DEFAULTS[chain];
  return [d.native.symbol, ...d.tokenSymbols];
}

/** `{ ethereum: ['USDT'] }`: only coins the chain carries (a typo would otherwise silently offer nothing there). */
export function checkCurrencies(value: Record<string, readonly string[]>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [chain, symbols] of Object.entries(value)) {
    checkChains([chain]);
    const list = [...new Set(symbols.map((s) => s.trim().toUpperCase()).filter(Boolean))];
    const known = coinsOf(chain as ChainSlug);
    const unknown = list.filter((s) => !known.includes(s));
    if (list.length === 0 || unknown.length) {
      throw new UsageError(`${chain}: ${unknown.length ? `unknown coin(s) ${unknown.join(', ')}` : 'no coin given'} (${chain} carries ${known.join(', ')})`);
    }
    out[chain] = list;
  }
  return out;
}

export function checkWebhookUrl(value: string): string {
  return parseWebhookUrl(value);
}

export interface PointInput {
  name: string;
  webhookUrl?: string | null;
  acceptedChains?: string[] | null;
  acceptedCurrencies?: Record<string, string[]> | null;
  webhookEvents?: string[] | null;
}

type Actor = Omit<AuditInput, 'action' | 'pointId' | 'details'>;

/** A new point; its apiSecret is returned once and never stored in the clear. */
export async function createPoint(common: Common, input: PointInput, actor: Actor | null): Promise<{ merchant: MerchantRecord; apiSecret: string }> {
  if (input.webhookUrl) await checkWebhookUrlAllowed(common.config, input.webhookUrl);
  return createMerchant(common.db, common.box, {
    name: input.name,
    webhookUrl: input.webhookUrl ?? null,
    acceptedChains: input.acceptedChains ?? null,
    acceptedCurrencies: input.acceptedCurrencies ?? null,
    webhookEvents: input.webhookEvents ?? null,
  }, actor ? { ...actor, action: 'point.create', details: { name: input.name, webhookUrl: input.webhookUrl ?? null } } : null);
}

/** Changes settings; a new webhook URL passes the SSRF rules first. */
export async function updatePoint(common: Common, id: string, changes: MerchantChanges, actor: Actor | null): Promise<MerchantRecord> {
  if (changes.webhookUrl) await checkWebhookUrlAllowed(common.config, changes.webhookUrl);
  const action = 'active' in changes && Object.keys(changes).length === 1 ? (changes.active ? 'point.enable' : 'point.disable') : 'point.update';
  return updateMerchant(common.db, id, changes, actor ? { ...actor, action, details: { ...changes } } : null);
}

/**
 * A new API secret, in force at once for signing and for webhook deliveries (the old one stops
 * working: no overlap). The secret is returned once; the audit row names the rotation, not the secret.
 */
export function rotatePointSecret(common: Common, id: string, actor: Actor | null): Promise<{ merchant: MerchantRecord; apiSecret: string }> {
  return rotateSecret(common.db, common.box, id, actor ? { ...actor, action: 'point.rotate-secret' } : null);
}
