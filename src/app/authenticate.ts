import { GatewayError } from '../domain/errors.ts';
import type { AuthOptions, AuthRequest, Principal, PrincipalKind } from '../domain/principal.ts';
import type { AuthScheme } from './auth-scheme.ts';
import type { DaemonDeps } from './deps.ts';
import { sessionScheme } from './session-scheme.ts';
import { signedRequestScheme } from './signed-request-scheme.ts';

/** Every scheme the server knows, by the principal it proves. */
const SCHEMES: { readonly [K in PrincipalKind]?: AuthScheme<K> } = {
  'api-key': signedRequestScheme,
  session: sessionScheme,
};

/**
 * Which principal is this request, for which merchant points: the one question every protected
 * route asks, whatever the scheme. `accept` lists the schemes the surface takes (the merchant API
 * takes 'api-key'); the first whose credentials the request presents decides, and when it
 * presents none the first accepted scheme refuses it with its own "missing" error.
 */
export async function authenticate<K extends PrincipalKind>(deps: DaemonDeps, req: AuthRequest, accept: readonly K[], options: AuthOptions = {}): Promise<Extract<Principal, { kind: K }>> {
  const schemes = accept.map((kind) => SCHEMES[kind] as AuthScheme<K> | undefined).filter((s) => s !== undefined);
  const scheme = schemes.find((s) => s.presented(req)) ?? schemes[0];
  if (!scheme) throw new GatewayError('INTERNAL_ERROR', `no authentication scheme for ${accept.join(', ')}`);
  return scheme.authenticate(deps, req, options);
}
