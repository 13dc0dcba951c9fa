import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { BaseError } from './errors.ts';

// API secrets at rest: AES-256-GCM under a key derived (HKDF-SHA256) from the master key.
// Stored form: v1.<key id>.<base64url(iv | ciphertext | tag)>; the row id is bound in as AAD so a
// ciphertext copied to another merchant point does not decrypt.

const VERSION = 'v1';

export class SecretBoxError extends BaseError {
  override readonly name = 'SecretBoxError';
}

export interface SecretBox {
  /** Short id of the derived key, stored beside each ciphertext to tell a wrong master key apart. */
  keyId: string;
  seal(plaintext: string, aad: string): string;
  open(sealed: string, aad: string): string;
}

export function createSecretBox(masterKey: string): SecretBox {
  const key = Buffer.from(hkdfSync('sha256', masterKey, 'chaingate', 'api-secret/v1', 32));
  const keyId = createHash('sha256').update(key).digest('hex').slice(0, 8);
  return {
    keyId,
    seal(plaintext, aad) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(aad));
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return `${VERSION}.${keyId}.${Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url')}`;
    },
    open(sealed, aad) {
      const [version, storedKeyId, payload] = sealed.split('.');
      if (version !== VERSION || !storedKeyId || !payload) throw new SecretBoxError('stored secret has an unknown format');
      if (storedKeyId !== keyId) {
        throw new SecretBoxError(
          `stored secrets were encrypted under another master key (key id ${storedKeyId}, this one is ${keyId}): check CHAINGATE_MASTER_KEY`,
        );
      }
      const raw = Buffer.from(payload, 'base64url');
      if (raw.length < 12 + 16) throw new SecretBoxError('stored secret is truncated');
      const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
      decipher.setAAD(Buffer.from(aad));
      decipher.setAuthTag(raw.subarray(raw.length - 16));
      try {
        return Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]).toString('utf8');
      } catch {
        throw new SecretBoxError('stored secret failed authentication: it was altered or belongs to another row');
      }
    },
  };
}
