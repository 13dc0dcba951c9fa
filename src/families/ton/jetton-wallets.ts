import { Address, beginCell, Cell } from '@ton/core';
import { raw } from './raw-address.ts';
import { TonApiError, type ToncenterV3 } from './toncenter-v3.ts';

// Each deposit's jetton wallet for each configured master, computed by the master itself
// (get_wallet_address through runGetMethod), never taken from a message. toncenter has no batch
// get-method, so a new deposit costs one call per master, once: the answers are kept for the
// deposits still watched (open payments and those in their late-funds window) and forgotten with
// them, so the cache is bounded by the watch set. New deposits are resolved a few at a time.

export interface JettonWalletOwner {
  /** The owner as the watch set holds it. */
  owner: string;
  master: string;
}

export interface JettonWallets {
  /**
   * The jetton wallet (raw) of every (owner, master) pair for these owners (raw -> as watched),
   * computing the missing ones; owners not listed are forgotten.
   */
  resolve(owners: Map<string, string>): Promise<Map<string, JettonWalletOwner>>;
  /** Owners whose wallets are kept. */
  size(): number;
}

export const DEFAULT_GET_METHOD_CONCURRENCY = 4;

export function createJettonWallets(api: ToncenterV3, masters: readonly string[], concurrency = DEFAULT_GET_METHOD_CONCURRENCY): JettonWallets {
  /** owner (raw) -> master -> jetton wallet (raw). */
  const known = new Map<string, Map<string, string>>();

  async function compute(ownerRaw: string, master: string): Promise<string> {
    const owner = beginCell().storeAddress(Address.parse(ownerRaw)).endCell().toBoc().toString('base64');
    const res = await api.runGetMethod(master, 'get_wallet_address', [{ type: 'slice', value: owner }]);
    if (res.exitCode !== 0) throw new TonApiError(`/api/v3/runGetMethod: get_wallet_address on ${master} failed (exit code ${res.exitCode})`);
    const item = res.stack[0];
    if (!item || typeof item.value !== 'string') throw new TonApiError('malformed answer to /api/v3/runGetMethod: get_wallet_address returned no cell');
    try {
      return raw(Cell.fromBase64(item.value).beginParse().loadAddress().toString());
    } catch {
      throw new TonApiError('malformed answer to /api/v3/runGetMethod: get_wallet_address returned no address');
    }
  }

  /** Runs the tasks with at most `limit` in flight; the first failure rejects and starts no more. */
  async function pool(tasks: (() => Promise<void>)[], limit: number): Promise<void> {
    let next = 0;
    let failed = false;
    const worker = async () => {
      while (!failed && next < tasks.length) {
        try {
          await tasks[next++]!();
        } catch (err) {
          failed = true;
          throw err;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  }

  return {
    async resolve(owners) {
      for (const ownerRaw of known.keys()) if (!owners.has(ownerRaw)) known.delete(ownerRaw);
      const missing: (() => Promise<void>)[] = [];
      for (const ownerRaw of owners.keys()) {
        for (const master of masters) {
          if (known.get(ownerRaw)?.has(master)) continue;
          missing.push(async () => {
            const wallet = await compute(ownerRaw, master);
            let byMaster = known.get(ownerRaw);
            if (!byMaster) known.set(ownerRaw, (byMaster = new Map()));
            byMaster.set(master, wallet);
          });
        }
      }
      await pool(missing, Math.max(1, concurrency));
      const out = new Map<string, JettonWalletOwner>();
      for (const [ownerRaw, pooled] of owners) {
        for (const [master, wallet] of known.get(ownerRaw) ?? []) out.set(wallet, { owner: pooled, master });
      }
      return out;
    },
    size: () => known.size,
  };
}
