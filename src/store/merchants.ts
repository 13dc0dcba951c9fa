import { randomBytes } from 'node:crypto';
import { newId } from '../domain/ids.ts';
import { UsageError } from '../domain/errors.ts';
import type { SecretBox } from '../domain/secret-box.ts';
import type { Reader, SqlValue } from './executor.ts';
import type { Database } from './orm.ts';
import { boolOf, dateOf, jsonOf, poolReader } from './raw-sql.ts';
import { insertAudit, type AuditInput } from './audit-log.ts';

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

export function merchantView(m: MerchantRecord): MerchantView {
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

/** A merchant point as the store keeps it (the API secret only as its ciphertext). */
export interface MerchantRecord {
  id: string;
  name: string;
  apiKey: string;
  apiSecretEnc: string;
  webhookUrl: string | null;
  active: boolean;
  acceptedChains: string[] | null;
  acceptedCurrencies: Record<string, string[]> | null;
  webhookEvents: string[] | null;
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

/** What an operator may change on a point; a key left out stays as it is, null clears it. */
export type MerchantChanges = Partial<Pick<MerchantRecord, 'name' | 'webhookUrl' | 'active' | 'acceptedChains' | 'acceptedCurrencies' | 'webhookEvents'>>;

interface MerchantRow {
  id: string;
  name: string;
  api_key: string;
  api_secret_enc: string;
  webhook_url: string | null;
  active: unknown;
  accepted_chains: unknown;
  accepted_currencies: unknown;
  webhook_events: unknown;
  version: number | string;
  created_at: unknown;
  updated_at: unknown;
}

const COLUMNS = 'id, name, api_key, api_secret_enc, webhook_url, active, accepted_chains, accepted_currencies, webhook_events, version, created_at, updated_at';

function merchantOf(r: MerchantRow): MerchantRecord {
  return {
    id: r.id,
    name: r.name,
    apiKey: r.api_key,
    apiSecretEnc: r.api_secret_enc,
    webhookUrl: r.webhook_url,
    active: boolOf(r.active),
    acceptedChains: jsonOf<string[]>(r.accepted_chains),
    acceptedCurrencies: jsonOf<Record<string, string[]>>(r.accepted_currencies),
    webhookEvents: jsonOf<string[]>(r.webhook_events),
    version: Number(r.version),
    createdAt: dateOf(r.created_at),
    updatedAt: dateOf(r.updated_at),
  };
}

const jsonColumn = (v: unknown): string | null => (v === null || v === undefined ? null : JSON.stringify(v));

async function merchantIn(r: Reader, id: string): Promise<MerchantRecord> {
  const row = await r.get<MerchantRow>(`select ${COLUMNS} from merchant_point where id = ?`, [id]);
  if (!row) throw new UsageError(`no merchant point with id ${JSON.stringify(id)}`);
  return merchantOf(row);
}

export async function createMerchant(db: Database, box: SecretBox, input: CreateMerchantInput, audit: AuditInput | null = null): Promise<{ merchant: MerchantRecord; apiSecret: string }> {
  const apiSecret = newApiSecret();
  const id = newId();
  const now = new Date();
  const merchant = await db.write(async (x) => {
    await x.run(
      `insert into merchant_point (${COLUMNS}) values (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)`,
      [id, input.name, newApiKey(), box.seal(apiSecret, id), input.webhookUrl ?? null, true, jsonColumn(input.acceptedChains), jsonColumn(input.acceptedCurrencies), jsonColumn(input.webhookEvents), now, now],
    );
    // The audit row in the same transaction as the change it records (never the secret).
    if (audit) await insertAudit(x, { ...audit, pointId: id });
    return merchantIn(x, id);
  });
  return { merchant, apiSecret };
}

export function getMerchantOrThrow(db: Database, id: string): Promise<MerchantRecord> {
  return merchantIn(poolReader(db), id);
}

export async function listMerchants(db: Database): Promise<MerchantRecord[]> {
  const rows = await poolReader(db).all<MerchantRow>(`select ${COLUMNS} from merchant_point order by created_at, id`);
  return rows.map(merchantOf);
}

const CHANGE_COLUMNS = { name: 'name', webhookUrl: 'webhook_url', active: 'active', acceptedChains: 'accepted_chains', acceptedCurrencies: 'accepted_currencies', webhookEvents: 'webhook_events' } as const;

/**
 * Changes a point in one statement. Every change bumps `version`, which is what tells each serve
 * process's key cache (src/store/merchant-keys.ts) that its copy is stale.
 */
export async function updateMerchant(db: Database, id: string, changes: MerchantChanges, audit: AuditInput | null = null): Promise<MerchantRecord> {
  if (Object.keys(changes).length === 0) return getMerchantOrThrow(db, id);
  const sets: string[] = [];
  const params: SqlValue[] = [];
  for (const [key, column] of Object.entries(CHANGE_COLUMNS) as [keyof MerchantChanges, string][]) {
    if (!(key in changes)) continue;
    const value = changes[key];
    sets.push(`${column} = ?`);
    params.push(key === 'name' || key === 'webhookUrl' || key === 'active' ? (value as string | boolean | null) : jsonColumn(value));
  }
  return db.write(async (x) => {
    if (!(await x.run(`update merchant_point set ${[...sets, 'version = version + 1', 'updated_at = ?'].join(', ')} where id = ?`, [...params, new Date(), id]))) {
      throw new UsageError(`no merchant point with id ${JSON.stringify(id)}`);
    }
    if (audit) await insertAudit(x, { ...audit, pointId: id });
    return merchantIn(x, id);
  });
}

export async function rotateSecret(db: Database, box: SecretBox, id: string, audit: AuditInput | null = null): Promise<{ merchant: MerchantRecord; apiSecret: string }> {
  const apiSecret = newApiSecret();
  const merchant = await db.write(async (x) => {
    if (!(await x.run('update merchant_point set api_secret_enc = ?, version = version + 1, updated_at = ? where id = ?', [box.seal(apiSecret, id), new Date(), id]))) {
      throw new UsageError(`no merchant point with id ${JSON.stringify(id)}`);
    }
    if (audit) await insertAudit(x, { ...audit, pointId: id });
    return merchantIn(x, id);
  });
  return { merchant, apiSecret };
}

/** The merchant point's apiSecret; throws SecretBoxError when its ciphertext does not open (callers code it). */
export function openSecret(box: SecretBox, merchant: Pick<MerchantRecord, 'id' | 'apiSecretEnc'>): string {
  return box.open(merchant.apiSecretEnc, merchant.id);
}
