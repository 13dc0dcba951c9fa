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
