import type { Common } from '../common.ts';
import type { ResolvedRegistry } from '../chains/registry.ts';
import type { ChainSlug } from '../chains/slugs.ts';
import { can, DashboardError, isAdmin, roleOn, type Permission, type Role } from '../domain/dashboard-roles.ts';
import { GatewayError, UsageError } from '../domain/errors.ts';
import { recordAudit } from '../store/audit-log.ts';
import { getMerchantOrThrow, listMerchants, merchantView, type MerchantChanges, type MerchantRecord, type MerchantView } from '../store/merchants.ts';
import { createPing } from '../webhooks/deliveries.ts';
import { createWebhookSender } from '../webhooks/sender.ts';
import type { DashboardPrincipal } from './dashboard-session.ts';
import type { Client } from './dashboard-tokens.ts';
import { checkChains, checkCurrencies, checkName, checkWebhookUrl, coinsOf, createPoint, rotatePointSecret, updatePoint } from './merchant-points.ts';

// Merchant points as a dashboard user sees and changes them. Roles are enforced here, not only by
// hiding buttons: a point not granted does not exist for the user (404, as the gateway scopes by
// point); a granted point whose role lacks the permission is a 403.

export interface DashboardPoint extends MerchantView {
  role: Role;
}

function notFound(): GatewayError {
  return new GatewayError('NOT_FOUND', 'No such merchant point');
}

/** The point if the user was granted it (else 404) with a role that has the permission (else 403). */
export async function grantedPoint(common: Common, principal: DashboardPrincipal, pointId: string, permission: Permission): Promise<{ merchant: MerchantRecord; role: Role }> {
  const role = roleOn(principal.grants, pointId);
  if (!role) throw notFound();
  const merchant = await getMerchantOrThrow(common.db, pointId).catch((err: unknown) => {
    if (err instanceof UsageError) throw notFound();
    throw err;
  });
  if (!can(role, permission)) throw new DashboardError('FORBIDDEN', 403, `A ${role} may not do this`);
  return { merchant, role };
}

function actor(principal: DashboardPrincipal, client: Client) {
  return { userId: principal.userId, actor: principal.email, ...client };
}

export async function pointsFor(common: Common, principal: DashboardPrincipal): Promise<DashboardPoint[]> {
  const out: DashboardPoint[] = [];
  for (const m of await listMerchants(common.db)) {
    const role = roleOn(principal.grants, m.id);
    if (role) out.push({ ...merchantView(m), role });
  }
  return out;
}

export async function pointFor(common: Common, principal: DashboardPrincipal, pointId: string): Promise<DashboardPoint> {
  const { merchant, role } = await grantedPoint(common, principal, pointId, 'read');
  return { ...merchantView(merchant), role };
}

/** The chains this deployment offers (enabled in its configuration) and the coins of each. */
export function offeredChains(registry: ResolvedRegistry): { slug: string; name: string; coins: string[] }[] {
  return Object.values(registry.chains)
    .filter((c) => c.enabled)
    .map((c) => ({ slug: c.slug, name: c.name, coins: coinsOf(c.slug as ChainSlug) }));
}

export interface PointForm {
  name?: string;
  webhookUrl?: string;
  /** `chain` and `chain:COIN` entries ticked in the form; absent: leave as is. */
  accepted?: string[];
}

function acceptedOf(registry: ResolvedRegistry, accepted: string[]): Pick<MerchantChanges, 'acceptedChains' | 'acceptedCurrencies'> {
  const offered = offeredChains(registry);
  const chains = checkChains(accepted.filter((a) => !a.includes(':')));
  const notOffered = chains.filter((c) => !offered.some((o) => o.slug === c));
  if (notOffered.length) throw new UsageError(`not offered by this deployment: ${notOffered.join(', ')}`);
  const currencies: Record<string, string[]> = {};
  for (const entry of accepted.filter((a) => a.includes(':'))) {
    const [chain, coin] = entry.split(':') as [string, string];
    if (chains.includes(chain)) (currencies[chain] ??= []).push(coin);
  }
  const checked = checkCurrencies(currencies);
  // A chain with all its coins ticked needs no restriction; every chain offered with all coins is "all".
  const restricted = Object.fromEntries(Object.entries(checked).filter(([c, coins]) => coins.length < coinsOf(c as ChainSlug).length));
  for (const c of chains) if (!checked[c]) throw new UsageError(`${c}: tick at least one coin`);
  const allChains = offered.every((o) => chains.includes(o.slug));
  return { acceptedChains: allChains ? null : chains, acceptedCurrencies: Object.keys(restricted).length ? restricted : null };
}

function changesOf(registry: ResolvedRegistry, form: PointForm): MerchantChanges {
  const changes: MerchantChanges = {};
  if (form.name !== undefined) changes.name = checkName(form.name);
  if (form.webhookUrl !== undefined) changes.webhookUrl = form.webhookUrl.trim() === '' ? null : checkWebhookUrl(form.webhookUrl.trim());
  if (form.accepted !== undefined) Object.assign(changes, acceptedOf(registry, form.accepted));
  return changes;
}

/** Only an owner of every point creates points (the new point is theirs through that grant). */
export async function createPointFromDashboard(common: Common, registry: ResolvedRegistry, principal: DashboardPrincipal, form: PointForm, client: Client): Promise<{ point: MerchantView; apiSecret: string }> {
  if (!isAdmin(principal.grants)) throw new DashboardError('FORBIDDEN', 403, 'Only an owner of every point creates points');
  const changes = changesOf(registry, { ...form, name: form.name ?? '' });
  const { merchant, apiSecret } = await createPoint(common, {
    name: changes.name!,
    webhookUrl: changes.webhookUrl ?? null,
    acceptedChains: changes.acceptedChains ?? null,
    acceptedCurrencies: changes.acceptedCurrencies ?? null,
  }, actor(principal, client));
  return { point: merchantView(merchant), apiSecret };
}

export async function updatePointFromDashboard(common: Common, registry: ResolvedRegistry, principal: DashboardPrincipal, pointId: string, form: PointForm, client: Client): Promise<MerchantView> {
  await grantedPoint(common, principal, pointId, 'settings');
  return merchantView(await updatePoint(common, pointId, changesOf(registry, form), actor(principal, client)));
}

export async function setPointActiveFromDashboard(common: Common, principal: DashboardPrincipal, pointId: string, active: boolean, client: Client): Promise<MerchantView> {
  await grantedPoint(common, principal, pointId, 'settings');
  return merchantView(await updatePoint(common, pointId, { active }, actor(principal, client)));
}

/** Rotation needs the point's name typed back (the confirmation) and the owner role. */
export async function rotateSecretFromDashboard(common: Common, principal: DashboardPrincipal, pointId: string, typed: string, client: Client): Promise<{ point: MerchantView; apiSecret: string }> {
  const { merchant } = await grantedPoint(common, principal, pointId, 'secrets');
  if (typed.trim() !== merchant.name) throw new UsageError("type the point's name exactly to confirm the rotation");
  const { merchant: rotated, apiSecret } = await rotatePointSecret(common, pointId, actor(principal, client));
  return { point: merchantView(rotated), apiSecret };
}

export interface TestEventResult {
  /** The ping's delivery, in the point's webhook log. */
  deliveryId: string;
  url: string | null;
  delivered: boolean;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
}

/** A signed `ping` to the point's webhook URL now, through the webhook sender (SSRF guard included). */
export async function sendTestEvent(common: Common, principal: DashboardPrincipal, pointId: string, client: Client): Promise<TestEventResult> {
  const { merchant } = await grantedPoint(common, principal, pointId, 'settings');
  if (!merchant.webhookUrl) throw new UsageError('set a webhook URL first');
  const sender = createWebhookSender({ common });
  const ping = await createPing(common.db, pointId, { owner: sender.owner, leaseMs: common.config.webhooks.leaseSeconds * 1000 });
  const outcome = await sender.attempt(ping.deliveryId);
  const result = { deliveryId: ping.deliveryId, url: outcome?.url ?? ping.url, delivered: outcome?.ok ?? false, statusCode: outcome?.statusCode ?? null, durationMs: outcome?.durationMs ?? 0, error: outcome ? outcome.error : 'taken by another sender' };
  await recordAudit(common.db, { ...actor(principal, client), action: 'point.test-event', pointId, details: { delivered: result.delivered, statusCode: result.statusCode } });
  return result;
}
