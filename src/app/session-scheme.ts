import type { AuthRequest, SessionPrincipal } from '../domain/principal.ts';
import type { AuthScheme } from './auth-scheme.ts';
import { authenticateSession } from './dashboard-session.ts';
import type { DaemonDeps } from './deps.ts';

// The dashboard's scheme (docs/dashboard.md#sessions): the session cookie, and nothing else. Only
// /dashboard accepts it; the gateway accepts only signed requests (src/app/authenticate.ts).

/** `__Host-cg_session` over https and on loopback hosts; `cg_session` over plain http elsewhere. */
export const SESSION_COOKIES = ['__Host-cg_session', 'cg_session'] as const;

/** The session token a request's Cookie header carries, if any. */
export function sessionTokenOf(req: Pick<AuthRequest, 'header'>): string | undefined {
  const header = req.header('cookie');
  if (!header) return undefined;
  const jar = new Map<string, string>();
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i > 0) jar.set(part.slice(0, i).trim(), part.slice(i + 1).trim());
  }
  for (const name of SESSION_COOKIES) {
    const v = jar.get(name);
    if (v) return v;
  }
  return undefined;
}

export const sessionScheme: AuthScheme<'session'> = {
  kind: 'session',
  presented: (req) => sessionTokenOf(req) !== undefined,
  authenticate: (deps: DaemonDeps, req: AuthRequest): Promise<SessionPrincipal> => authenticateSession(deps.common, sessionTokenOf(req)),
};
