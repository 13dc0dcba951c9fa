import type { AuthOptions, AuthRequest, Principal, PrincipalKind } from '../domain/principal.ts';
import type { DaemonDeps } from './deps.ts';

/**
 * One way of proving who a request is (src/app/authenticate.ts picks among them). The signed
 * request is one (src/app/signed-request-scheme.ts); the dashboard's session is the other. A
 * scheme reads its credentials through store functions and answers a Principal or throws the
 * GatewayError of the spec's check that failed.
 */
export interface AuthScheme<K extends PrincipalKind = PrincipalKind> {
  kind: K;
  /** Whether the request carries this scheme's credentials at all (a header, a cookie). */
  presented(req: AuthRequest): boolean;
  authenticate(deps: DaemonDeps, req: AuthRequest, options: AuthOptions): Promise<Extract<Principal, { kind: K }>>;
}
