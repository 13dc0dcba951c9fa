/**
 * A merchant point as the gateway authenticates it: what the signature check and the scoping need,
 * with the secret already decrypted. Good while the stored `version` is the same.
 */
export interface AuthMerchant {
  id: string;
  apiKey: string;
  active: boolean;
  version: number;
  /** The decrypted API secret; null when its ciphertext does not open (`secretError` says why). */
  secret: string | null;
  secretError: string | null;
}

/** The process's merchant points by API key (src/store/merchant-keys.ts MerchantKeyCache satisfies it). */
export interface MerchantKeys {
  /** The cached entry of an active point, without touching the database. */
  peek(apiKey: string): AuthMerchant | undefined;
  /** Reads the point from the database (and caches it when active); null when the key is unknown. */
  load(apiKey: string): Promise<AuthMerchant | null>;
  /** Whether the entry is still the stored version of an active point (one primary-key lookup). */
  current(entry: AuthMerchant): Promise<boolean>;
  invalidate(apiKey: string): void;
}
