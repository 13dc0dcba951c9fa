import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { SweepTransactionSchema } from './sweep-api.ts';
import { senderFee } from './sender-fee.ts';

// The fixture is toncenter API v3's answer to GET /api/v3/transactionsByMessage (ton-org/docs
// ecosystem/rpc/toncenter/v3.yaml, the Transaction and Message schemas: amounts as decimal strings,
// raw upper-case addresses, base64 hashes) for two wallet v4r2 refund orders of one deposit: the
// first deploys the wallet and sends 0.5 TON with mode 1, the second sends the rest less 0.01 TON.
// Each was executed by @ton/sandbox's TVM under mainnet's configuration and served by
// test/helpers/toncenter-node.ts; beside each answer, the deposit's balance before and after the
// order as the emulator held it.

interface Order {
  balance_before: string;
  balance_after: string;
  transactionsByMessage: { transactions: unknown[] };
}

const orders = (JSON.parse(readFileSync(new URL('../../../test/fixtures/ton/wallet-refund-orders.json', import.meta.url), 'utf8')) as { orders: Order[] }).orders;

test('senderFee() is what the order took off the wallet beside the TON it sent: total_fees plus each message\'s fwd_fee', () => {
  assert.equal(orders.length, 2);
  for (const [i, order] of orders.entries()) {
    const [raw] = order.transactionsByMessage.transactions;
    const tx = SweepTransactionSchema.parse(raw);
    const sent = (tx.out_msgs ?? []).reduce((s, m) => s + BigInt(String(m.value)), 0n);
    const charged = BigInt(order.balance_before) - BigInt(order.balance_after) - sent;
    assert.equal(senderFee(tx), charged, `order ${i}: the balance fell by the values sent and this fee`);
    // total_fees alone holds only the first share of the forwarding fee: the deposit would hold less than recorded.
    assert.ok(tx.total_fees !== undefined && tx.total_fees < charged, `order ${i}: total_fees ${tx.total_fees} is less than the ${charged} charged`);
  }
  assert.equal(senderFee(SweepTransactionSchema.parse(orders[0]!.transactionsByMessage.transactions[0])), 5_135_732n + 266_669n);
});

test('senderFee() adds an ihr_fee, and reads an external-out message (fwd_fee null) as costing nothing beyond total_fees', () => {
  const tx = SweepTransactionSchema.parse(orders[1]!.transactionsByMessage.transactions[0]);
  const base = senderFee(tx);
  const [out] = tx.out_msgs ?? [];
  assert.ok(out);
  const external = { hash: 'AAAA', source: out.destination, destination: null, value: null, fwd_fee: null, ihr_fee: null, opcode: null };
  assert.equal(senderFee(SweepTransactionSchema.parse({ ...(orders[1]!.transactionsByMessage.transactions[0] as object), out_msgs: [{ ...(out as object), fwd_fee: out.fwd_fee!.toString(), ihr_fee: '1000' }, external] })), base + 1000n);
});
