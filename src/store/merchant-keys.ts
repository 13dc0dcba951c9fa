import type { AuthMerchant } from '../domain/merchant-auth.ts';
import { SecretBoxError, type SecretBox } from '../domain/secret-box.ts';
import type { Database } from './orm.ts';
import { rawQuery } from './raw-sql.ts';

interface MerchantAuthRow {
  id: string;
  api_key: string;
  api_secret_enc: string;
  active: number | boolean;
  version: number | string;
}

/**
 * Merchant points by API key, with their decrypted secrets, for this process. The secret and the
 * active flag only change with the row's version, so an entry is reused until a check against the
 * database shows a newer version (docs/performance.md, "merchant cache"):
 *  - a write checks the version inside its own transaction, in the idempotency claim statement
 *    (src/store/idempotency.ts), at no extra cost, so it is never done on a stale secret;
 *  - a read checks it with one primary-key lookup (`apiKeyIsCurrent`);
 *  - a signature that does not verify against a cached secret checks it too (the secret may have
 *    been rotated by another process).
 * Only active points are cached, so an unknown or disabled key always reads the database (callers
 * count such requests against the service-wide rate limits first). The cache is this module's own:
 * callers see the functions below, one cache per Database.
 */
class MerchantKeyCache {
  readonly byKey = new Map<string, AuthMerchant>();
  constructor(readonly max = 10_000) {}

  set(entry: AuthMerchant): void {
    if (this.byKey.size >= this.max) this.byKey.delete(this.byKey.keys().next().value!);
    this.byKey.set(entry.apiKey, entry);
  }
}

const caches = new WeakMap<Database, MerchantKeyCache>();

function cacheOf(db: Database): MerchantKeyCache {
  let cache = caches.get(db);
  if (!cache) {
    cache = new MerchantKeyCache();
    caches.set(db, cache);
  }
  return cache;
}

/** The cached entry of an active point, without touching the database. */
export function cachedApiKey(db: Database, apiKey: string): AuthMerchant | undefined {
  return caches.get(db)?.byKey.get(apiKey);
}

/** Reads the point from the database and caches it when active; null when the key is unknown. */
export async function loadApiKey(db: Database, box: SecretBox, apiKey: string): Promise<AuthMerchant | null> {
  const { rows } = await rawQuery<MerchantAuthRow>(db.em(), db.dialect, 'select id, api_key, api_secret_enc, active, version from merchant_point where api_key = ?', [apiKey]);
  const row = rows[0];
  const cache = cacheOf(db);
  cache.byKey.delete(apiKey);
  if (!row) return null;
  let secret: string | null = null;
  let secretError: string | null = null;
  try {
    secret = box.open(row.api_secret_enc, row.id);
  } catch (err) {
    if (!(err instanceof SecretBoxError)) throw err;
    secretError = err.message;
  }
  const entry: AuthMerchant = { id: row.id, apiKey: row.api_key, active: row.active === true || row.active === 1, version: Number(row.version), secret, secretError };
  if (entry.active && secret !== null) cache.set(entry);
  return entry;
}

/** Whether the entry is still the stored version of an active point (one primary-key lookup); forgets it when not. */
export async function apiKeyIsCurrent(db: Database, entry: AuthMerchant): Promise<boolean> {
  const { rows } = await rawQuery<{ version: number | string; active: number | boolean }>(db.em(), db.dialect, 'select version, active from merchant_point where id = ?', [entry.id]);
  const row = rows[0];
  const ok = row !== undefined && Number(row.version) === entry.version && (row.active === true || row.active === 1);
  if (!ok) caches.get(db)?.byKey.delete(entry.apiKey);
  return ok;
}
