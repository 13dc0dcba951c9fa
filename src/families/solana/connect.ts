import { UsageError } from '../../domain/errors.ts';
import { createHttpClient } from '../http-client.ts';
import { endpoint } from '../probe.ts';
import type { SourceFactory } from '../source.ts';
import { createSolanaSource, SOLANA_GENESIS } from './solana-source.ts';
import { associatedTokenAccounts } from './token-accounts.ts';

/** The Solana reader, once the endpoint's genesis hash proved it serves the configured cluster. */
export const connectSolana: SourceFactory = async (network, config, log) => {
  const http = createHttpClient({ baseUrl: network.rpcUrl, timeoutMs: config.indexer.rpcTimeoutMs, log });
  const genesis = (await http.jsonRpc<string>('getGenesisHash', [])).result;
  const expected = SOLANA_GENESIS[network.network];
  if (expected && genesis !== expected) {
    throw new UsageError(`${new URL(network.rpcUrl).host} serves a cluster whose genesis is ${String(genesis).slice(0, 12)}…, not solana ${network.network}: check ${endpoint(network)}`);
  }
  const mints = network.tokens.flatMap((t) => (t.address ? [t.address] : []));
  return createSolanaSource({ http, mode: network.mode, concurrency: network.concurrency, mints, tokenAccountOf: associatedTokenAccounts });
};
