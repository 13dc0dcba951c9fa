import * as bitcoin from 'bitcoinjs-lib';
import type { FamilySweepSender } from '../sweep.ts';
import { bitcoinJsNetwork } from './networks.ts';
import type { BitcoinSweepPayload } from './sweep-payload.ts';
import { createSweepApi } from './sweep-api.ts';

// Broadcast and follow a signed bitcoin sweep: Esplora POST /tx or Core sendrawtransaction. A node
// that already holds the transaction may refuse the second copy ("txn-already-known", "already in
// block chain"): the transaction's own state decides, so a resumed broadcast never sends twice and
// never records a refusal for a transaction that is on its way. Bitcoin has no finality signal:
// the network's confirmation count (chains.bitcoin.*.confirmations) makes a sweep final.

export const bitcoinSweepSender: FamilySweepSender = {
  async broadcast(network, config, tx) {
    const api = createSweepApi(network, config);
    const answer = await api.broadcast(tx.raw);
    if (answer.accepted) return { accepted: true };
    const state = await api.txState(tx.txid);
    if (state.found) return { accepted: true };
    return { accepted: false, error: answer.error };
  },

  async status(network, config, txid) {
    const state = await createSweepApi(network, config).txState(txid);
    if (!state.found) return { state: 'unknown' };
    return { state: state.confirmations >= Math.max(1, network.requiredConfirmations) ? 'final' : 'pending' };
  },

  async stale(network, config, plan) {
    const api = createSweepApi(network, config);
    const js = bitcoin.networks[bitcoinJsNetwork(network.testnet, network.network)];
    for (const tx of plan.transactions) {
      const psbt = bitcoin.Psbt.fromBase64((tx.payload as BitcoinSweepPayload).psbt, { network: js });
      for (const input of psbt.txInputs) {
        const txid = Buffer.from(input.hash).reverse().toString('hex');
        if ((await api.isSpent(txid, input.index)) === true) return `${tx.id} spends ${txid}:${input.index}, which is spent already (by this sweep, or by a wallet since the plan was made)`;
      }
    }
    return null;
  },
};
