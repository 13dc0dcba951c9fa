import type { Grant } from './dashboard-roles.ts';

/**
 * Who a request is, whatever proved it: the answer of authentication (src/app/authenticate.ts),
 * one shape for every scheme. Routes scope everything they read or write to `merchantPointIds`.
 */
export type Principal = ApiKeyPrincipal | SessionPrincipal;
export type PrincipalKind = Principal['kind'];

/** A merchant's server, by an HMAC-signed request: exactly the one point its API key names. */
export interface ApiKeyPrincipal {
  kind: 'api-key';
  merchantPointIds: readonly [string];
  apiKey: string;
  /** The point's stored version the key was checked against; a write re-checks it in its transaction. */
  version: number;
}

/**
 * A person at the dashboard, by a session cookie (src/app/session-scheme.ts): the points their
 * account may see (every point when a grant is on `*`), their roles, and the session's state.
 */
export interface SessionPrincipal {
  kind: 'session';
  merchantPointIds: readonly string[];
  sessionId: string;
  userId: string;
  email: string;
  grants: readonly Grant[];
  /** `mfa`: the password was right, the second factor is still owed; `full`: signed in. */
  stage: 'mfa' | 'full';
  /** The session's CSRF token, which every state-changing request must carry. */
  csrfToken: string;
  hasTotp: boolean;
  passkeys: number;
}

/**
 * A request as authentication sees it, whatever the HTTP framework: the method, the path without
 * its query string, the headers (lower-case names; an empty value counts as absent), the exact
 * body bytes, and where to log a fault of the server's own.
 */
export interface AuthRequest {
  method: string;
  path: string;
  header(name: string): string | undefined;
  body: Uint8Array;
  log: { error(obj: object, msg: string): void };
}

export interface AuthOptions {
  /** Skip every cache: read the credential from the database (a write found the cached one stale). */
  fresh?: boolean;
  /** Confirm a cached credential against the database (reads; a write confirms it in its transaction). */
  confirm?: boolean;
  nowMs?: number;
}
