import { randomBytes } from 'node:crypto';
import { newId } from '../domain/ids.ts';
import type { EntityManager } from '@mikro-orm/sql';
import { UsageError } from '../domain/errors.ts';
import type { SecretBox } from '../domain/secret-box.ts';
import { MerchantPoint } from './entities/merchant-point.entity.ts';

export interface MerchantView {
  id: string;
  name: string;
  apiKey: string;
  webhookUrl: string | null;
  active: boolean;
  acceptedChains: string[] | null;
  acceptedCurrencies: Record<string, string[]> | null;
  webhookEvents: string[] | null;
  createdAt: string;
  updatedAt: string;
}

export function merchantView(m: MerchantPoint): MerchantView {
  return {
    id: m.id,
    name: m.name,
    apiKey: m.apiKey,
    webhookUrl: m.webhookUrl ?? null,
    active: m.active,
    acceptedChains: m.acceptedChains ?? null,
    acceptedCurrencies: m.acceptedCurrencies ?? null,
    webhookEvents: m.webhookEvents ?? null,
    createdAt: m.createdAt.toISOString(),
    updatedAt: m.updatedAt.toISOString(),
  };
}

/** 64 lowercase hex characters (the spec allows 32 or 64; we issue 64). */
export function newApiKey(): string {
  return randomBytes(32).toString('hex');
}

export function newApiSecret(): string {
  return randomBytes(32).toString('hex');
}

export interface CreateMerchantInput {
  name: string;
  webhookUrl?: string | null;
  acceptedChains?: string[] | null;
  acceptedCurrencies?: Record<string, string[]> | null;
  webhookEvents?: string[] | null;
}

export async function createMerchant(
  em: EntityManager,
  box: SecretBox,
  input: CreateMerchantInput,
): Promise<{ merchant: MerchantPoint; apiSecret: string }> {
  const apiSecret = newApiSecret();
  const id = newId();
  const merchant = em.create(MerchantPoint, {
    id,
    name: input.name,
    apiKey: newApiKey(),
    apiSecretEnc: box.seal(apiSecret, id),
    webhookUrl: input.webhookUrl ?? null,
    active: true,
    acceptedChains: input.acceptedChains ?? null,
    acceptedCurrencies: input.acceptedCurrencies ?? null,
    webhookEvents: input.webhookEvents ?? null,
  });
  await em.flush();
  return { merchant, apiSecret };
}

export async function getMerchantOrThrow(em: EntityManager, id: string): Promise<MerchantPoint> {
  const merchant = await em.findOne(MerchantPoint, { id });
  if (!merchant) throw new UsageError(`no merchant point with id ${JSON.stringify(id)}`);
  return merchant;
}

export async function listMerchants(em: EntityManager): Promise<MerchantPoint[]> {
  return em.find(MerchantPoint, {}, { orderBy: { createdAt: 'asc', id: 'asc' } });
}

export async function rotateSecret(em: EntityManager, box: SecretBox, id: string): Promise<{ merchant: MerchantPoint; apiSecret: string }> {
  const merchant = await getMerchantOrThrow(em, id);
  const apiSecret = newApiSecret();
  merchant.apiSecretEnc = box.seal(apiSecret, merchant.id);
  await em.flush();
  return { merchant, apiSecret };
}

/** The merchant point and its decrypted secret for signature checks; null when unknown. */
export async function findByApiKey(em: EntityManager, apiKey: string): Promise<MerchantPoint | null> {
  return em.findOne(MerchantPoint, { apiKey });
}

/** The merchant point's apiSecret; throws SecretBoxError when its ciphertext does not open (callers code it). */
export function openSecret(box: SecretBox, merchant: MerchantPoint): string {
  return box.open(merchant.apiSecretEnc, merchant.id);
}
