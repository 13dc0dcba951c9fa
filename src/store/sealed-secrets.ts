import type { Database } from './orm.ts';
import { poolReader } from './raw-sql.ts';

// What the start-up checks of the master key read (src/cli/context.ts): the stored, sealed API
// secrets of merchant points, each naming the key it was sealed under.

export interface SealedSecret {
  merchantId: string;
  /** v1.<key id>.<ciphertext> (src/domain/secret-box.ts). */
  apiSecretEnc: string;
}

/** The sealed secrets of the newest merchant points, newest first. */
export async function newestSealedSecrets(db: Database, limit: number): Promise<SealedSecret[]> {
  const rows = await poolReader(db).all<{ id: string; api_secret_enc: string }>('select id, api_secret_enc from merchant_point order by created_at desc limit ?', [limit]);
  return rows.map((r) => ({ merchantId: r.id, apiSecretEnc: r.api_secret_enc }));
}
