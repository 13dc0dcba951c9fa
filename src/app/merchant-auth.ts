import type { MerchantKeys } from '../domain/merchant-auth.ts';
import { merchantKeyCache } from '../store/merchant-keys.ts';
import type { DaemonDeps } from './deps.ts';

/** The process's merchant key cache, shared by the gateway's authentication and the service-wide rate limits. */
export function merchantKeysOf(deps: DaemonDeps): MerchantKeys {
  return merchantKeyCache(deps.common.db, deps.common.box);
}
