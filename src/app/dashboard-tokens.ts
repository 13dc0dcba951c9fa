import { createHash, randomBytes } from 'node:crypto';

/** A random 256-bit token (base64url), for session cookies, set-up links and CSRF tokens. */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** What the database keeps of a token: its SHA-256, hex. */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Who made a request: kept in the audit log and on the session. */
export interface Client {
  ip: string | null;
  userAgent: string | null;
}
