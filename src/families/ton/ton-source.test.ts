import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Address, beginCell, contractAddress, toNano, type StateInit } from '@ton/core';
import { internal } from '@ton/sandbox';
import { getNetwork} from '../../chains/registry.ts';
import { validateAddress, resolveChains } from '../families.ts';
import { createLogger } from '../../logger.ts';
import { startTonNode, type TonNode } from '../../../test/helpers/toncenter-node.ts';
import { createHttpClient } from '../http-client.ts';
import type { SeenTransfer } from '../source.ts';
import { createTonSource, raw, TON_GLOBAL_IDS } from './ton-source.ts';
import { createToncenterV3, TonApiError, type ToncenterV3 } from './toncenter-v3.ts';

// The TON reader against real TVM transactions (@ton/sandbox behind the toncenter v3 test server):
// what is credited and what is recorded with which reason, the range lookup when the API misses a
// block, malformed answers, and the jetton-wallet cache. The indexer process end to end:
// test/integration/ton-indexer.test.ts.

const log = createLogger('silent');
const apiOf = (node: TonNode): ToncenterV3 => createToncenterV3(createHttpClient({ baseUrl: node.url, timeoutMs: 10_000, log }));
const fresh = () => new Address(0, randomBytes(32));
const deposit = (a: Address) => a.toString({ bounceable: false });

/** A contract from raw TVM code (no state), for deposits that are deployed and misbehave. */
function contract(code: number[]): { address: Address; init: StateInit } {
  const init = { code: beginCell().storeBuffer(Buffer.from(code)).endCell(), data: beginCell().storeUint(Math.floor(Math.random() * 2 ** 32), 32).endCell() };
  return { address: contractAddress(0, init), init };
}
// NEWC ENDC PUSHINT 0 SENDRAWMSG: an empty cell as an outgoing message, which the action phase refuses (result code 34).
const ACTION_FAILS = [0xc8, 0xc9, 0x70, 0xfb, 0x00];
// THROW 40: the compute phase fails.
const COMPUTE_FAILS = [0xf2, 0x28];
// No code at all: an implicit RET, every message accepted.
const ACCEPTS_ALL: number[] = [];

describe('TON reader (toncenter v3 over a real TVM)', () => {
  test('credits only what stayed with the deposit; bounces, failed phases and TON attached to jetton messages are recorded with their reason', async (t) => {
    const node = await startTonNode();
    t.after(() => node.close());
    const from = BigInt(node.seqno()) + 1n;
    const plain = fresh();
    const bounced = fresh();
    const dust = fresh();
    const binary = fresh();
    const encrypted = fresh();
    const actionFails = contract(ACTION_FAILS);
    const computeFails = contract(COMPUTE_FAILS);
    const deployed = contract(ACCEPTS_ALL);
    const usdtDeposit = fresh();
    const forged = fresh();

    await node.sendTon(plain, toNano('1.5'), false);
    await node.sendTon(bounced, toNano('1.5'), true); // to an undeployed wallet: comes back
    await node.sendTon(dust, 100_000n, true); // bounceable, too little to pay for its own bounce
    await node.sendTon(binary, toNano('0.7'), false, beginCell().storeUint(0xdeadbeef, 32).storeUint(42, 64).endCell());
    await node.sendTon(encrypted, toNano('0.8'), false, beginCell().storeUint(0x2167da4b, 32).storeBuffer(randomBytes(64)).endCell());
    await node.send(internal({ from: node.buyer.address, to: actionFails.address, value: toNano('1'), bounce: false, stateInit: actionFails.init }));
    await node.send(internal({ from: node.buyer.address, to: computeFails.address, value: toNano('1'), bounce: false, stateInit: computeFails.init }));
    await node.send(internal({ from: node.buyer.address, to: deployed.address, value: toNano('0.1'), bounce: false, stateInit: deployed.init }));
    await node.sendTon(deployed.address, toNano('0.9'), true, beginCell().storeUint(0x12345678, 32).endCell()); // deployed: compute and action succeed
    await node.sendJetton(node.usdt, usdtDeposit, 25_000_000n, toNano('0.01'), usdtDeposit); // forward TON and the excess to the deposit
    await node.forgeNotification(forged, 25_000_000n); // 0.05 TON from a plain wallet
    node.mine(2);

    const addresses = [plain, bounced, dust, binary, encrypted, actionFails.address, computeFails.address, deployed.address, usdtDeposit, forged].map(deposit);
    const read = async (accountsPerScan: number) => {
      const source = createTonSource({ api: apiOf(node), testnet: false, jettonMasters: [node.usdt.master.toString()], accountsPerScan });
      const range = await source.fetchRange(from, BigInt(node.seqno()), { addresses: new Set(addresses), paymentContract: null });
      assert.equal(range.through, undefined, 'the whole range was read');
      return range.transfers;
    };
    const transfers = await read(1000);
    const of = (a: Address) => transfers.filter((x) => x.to === deposit(a));
    const only = (a: Address): SeenTransfer => {
      const list = of(a);
      assert.equal(list.length, 1, `${deposit(a)}: ${JSON.stringify(list, (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))}`);
      return list[0]!;
    };

    const credited = (a: Address, amount: bigint) => {
      const x = only(a);
      assert.deepEqual([x.token, x.amount, x.reverted, x.revertReason, x.notCreditedReason], [null, amount, false, undefined, undefined], deposit(a));
    };
    credited(plain, toNano('1.5'));
    credited(binary, toNano('0.7')); // a binary payload is still TON that stayed
    credited(encrypted, toNano('0.8')); // an encrypted comment too
    // A deployed deposit: its deploy message and a later one, both run and accepted.
    assert.deepEqual(of(deployed.address).map((x) => [x.amount, x.reverted, x.revertReason]), [[toNano('0.1'), false, undefined], [toNano('0.9'), false, undefined]]);

    const reverted = (a: Address, reason: RegExp) => {
      const x = only(a);
      assert.equal(x.token, null);
      assert.equal(x.reverted, true, deposit(a));
      assert.match(x.revertReason ?? '', reason);
    };
    reverted(bounced, /^bounced: the deposit wallet is not deployed; the value went back to the sender$/);
    reverted(dust, /^bounce failed \(nofunds\)/);
    reverted(actionFails.address, /^not credited: its action phase failed \(result code 34\)$/);
    reverted(computeFails.address, /^not credited: its compute phase failed \(exit code 40\)$/);

    // The USDT deposit: the jettons credited from its own wallet; the TON that came with them (the
    // notification's forward TON, the excess) recorded as native TON that the reader says is no payment.
    const usdt = of(usdtDeposit);
    assert.equal(usdt.length, 3, JSON.stringify(usdt.map((x) => x.token)));
    const jettons = usdt.find((x) => x.token === node.usdt.master.toString());
    assert.deepEqual([jettons?.amount, jettons?.reverted, jettons?.notCreditedReason], [25_000_000n, false, undefined]);
    const tonOf = (reason: RegExp) => usdt.filter((x) => x.token === null && reason.test(x.notCreditedReason ?? ''));
    assert.deepEqual(tonOf(/^TON attached to a jetton transfer notification \(forward_ton_amount\); not a payment$/).map((x) => [x.amount, x.kind, x.logIndex]), [[toNano('0.01'), 'native', -1]]);
    const [excess] = tonOf(/^TON returned as jetton excesses/);
    assert.ok(excess && excess.amount > 0n && excess.kind === 'native', 'the excess is native TON, not credited');
    assert.ok(usdt.every((x) => !x.reverted));

    // A notification that is not from the deposit's jetton wallet: the jettons it claims and the TON
    // it carries are both recorded, neither credited.
    const [claim, forgedTon] = of(forged);
    assert.deepEqual([claim?.token, claim?.amount, claim?.kind, claim?.logIndex], [`unverified-jetton-wallet:${raw(node.attacker.address.toString())}`, 25_000_000n, 'token', -2]);
    assert.match(claim?.notCreditedReason ?? '', /not the deposit's jetton wallet, claims 25000000 jetton units/);
    assert.deepEqual([forgedTon?.token, forgedTon?.amount, forgedTon?.kind, forgedTon?.reverted], [null, toNano('0.05'), 'native', false]);
    assert.match(forgedTon?.notCreditedReason ?? '', new RegExp(`^TON attached to a forged transfer_notification from ${raw(node.attacker.address.toString())} `));

    // Reading whole masterchain blocks finds exactly the same.
    const key = (x: SeenTransfer) => `${x.txHash}/${x.logIndex}/${x.to}/${x.token}/${x.amount}/${x.reverted}/${x.revertReason}/${x.notCreditedReason}`;
    assert.deepEqual((await read(0)).map(key).sort(), transfers.map(key).sort());
  });

  test('a block missing from the API is a bounded, retried fault; history before the API starts is skipped', async (t) => {
    const node = await startTonNode();
    t.after(() => node.close());
    node.mine(20);
    const head = BigInt(node.seqno());
    const first = head - 24n; // the helper's first block (1000)
    const source = createTonSource({ api: apiOf(node), testnet: false, jettonMasters: [] });
    const watch = { addresses: new Set<string>(), paymentContract: null };
    const blocksCalls = () => node.calls['/api/v3/blocks'] ?? 0;

    // The block before the range is missing though the API holds older and newer ones.
    const hidden = head - 10n;
    node.tamper((path, query, answer) => (path === '/api/v3/blocks' && query.get('seqno') === String(hidden) ? { blocks: [] } : answer));
    const before = blocksCalls();
    await assert.rejects(source.fetchRange(hidden + 1n, head, watch), (err: unknown) => err instanceof TonApiError && /masterchain block \d+ is missing, though the API holds/.test(err.message));
    assert.ok(blocksCalls() - before <= 1, 'no walk through the history');

    // A block missing inside the range, with later ones present: a fault too, not a silent stop.
    node.tamper((path, query, answer) => {
      if (path !== '/api/v3/blocks' || query.get('start_utime') === null) return answer;
      return { blocks: (answer as { blocks: { seqno: number }[] }).blocks.filter((b) => BigInt(b.seqno) !== hidden) };
    });
    await assert.rejects(source.fetchRange(hidden - 3n, head, watch), /masterchain block \d+ is missing, though the API holds/);

    // The API not there yet: read up to what it has, the rest next poll (not a fault).
    node.tamper(null);
    const ahead = await source.fetchRange(head - 2n, head + 5n, watch);
    assert.equal(ahead.through, head);
    assert.deepEqual(ahead.blocks.map((b) => b.number), [head - 2n, head - 1n, head]);
    assert.equal(ahead.blocks[1]!.parentHash, ahead.blocks[0]!.hash);

    // A range starting before the oldest block the API holds starts at that block; one wholly before it is passed over.
    const early = await source.fetchRange(first - 5n, first + 2n, watch);
    assert.deepEqual(early.blocks.map((b) => b.number), [first, first + 1n, first + 2n]);
    const none = await source.fetchRange(first - 50n, first - 10n, watch);
    assert.deepEqual([none.blocks.length, none.through], [0, first - 10n]);
  });

  test('a malformed answer is a TonApiError naming the endpoint, never a TypeError', async (t) => {
    const node = await startTonNode();
    t.after(() => node.close());
    const from = BigInt(node.seqno()) + 1n;
    const owner = fresh();
    await node.sendTon(owner, toNano('1'), false);
    const watch = { addresses: new Set([deposit(owner)]), paymentContract: null };
    const source = createTonSource({ api: apiOf(node), testnet: false, jettonMasters: [node.usdt.master.toString()] });
    const cases: [string, (answer: Record<string, unknown>) => unknown, RegExp][] = [
      ['/api/v3/transactions', (a) => ({ ...a, transactions: (a.transactions as Record<string, unknown>[]).map((tx) => ({ ...tx, account: 42 })) }), /^malformed answer to \/api\/v3\/transactions: transactions\.0\.account/],
      ['/api/v3/transactions', (a) => ({ ...a, transactions: (a.transactions as Record<string, unknown>[]).map((tx) => ({ ...tx, in_msg: { ...(tx.in_msg as object), source: 'not-an-address', value: '-5' } })) }), /^malformed answer to \/api\/v3\/transactions: transactions\.0\.in_msg/],
      ['/api/v3/transactions', (a) => ({ ...a, transactions: (a.transactions as Record<string, unknown>[]).map((tx) => ({ ...tx, description: null })) }), /^malformed answer to \/api\/v3\/transactions: transactions\.0\.description/],
      ['/api/v3/transactions', () => 'oops', /^malformed answer to \/api\/v3\/transactions: \(root\)/],
      ['/api/v3/blocks', (a) => ({ blocks: (a.blocks as Record<string, unknown>[]).map((b) => ({ ...b, root_hash: null })) }), /^malformed answer to \/api\/v3\/blocks: blocks\.0\.root_hash/],
      ['/api/v3/runGetMethod', () => ({ exit_code: 0, stack: [] }), /^malformed answer to \/api\/v3\/runGetMethod: get_wallet_address returned no cell/],
      ['/api/v3/runGetMethod', () => ({ exit_code: 0, stack: [{ type: 'cell', value: beginCell().storeUint(1, 8).endCell().toBoc().toString('base64') }] }), /^malformed answer to \/api\/v3\/runGetMethod: get_wallet_address returned no address/],
      ['/api/v3/runGetMethod', () => ({ stack: 'none' }), /^malformed answer to \/api\/v3\/runGetMethod: exit_code/],
    ];
    for (const [endpoint, corrupt, message] of cases) {
      node.tamper((path, _query, answer) => (path === endpoint ? corrupt(answer as Record<string, unknown>) : answer));
      // A fresh source each time: the jetton wallet is otherwise remembered.
      const s = createTonSource({ api: apiOf(node), testnet: false, jettonMasters: [node.usdt.master.toString()] });
      await assert.rejects(s.fetchRange(from, BigInt(node.seqno()), watch), (err: unknown) => {
        assert.ok(err instanceof TonApiError, `${endpoint}: ${String(err)}`);
        assert.match(err.message, message);
        return true;
      });
    }
    node.tamper(null);
    const ok = await source.fetchRange(from, BigInt(node.seqno()), watch);
    assert.equal(ok.transfers.length, 1, 'the same answers, unharmed, read fine');
  });

  test('jetton wallets: computed a few at a time, kept only for watched deposits', async (t) => {
    const node = await startTonNode();
    t.after(() => node.close());
    const api = apiOf(node);
    let inFlight = 0;
    let most = 0;
    let calls = 0;
    const counted: ToncenterV3 = {
      ...api,
      async runGetMethod(...args) {
        calls++;
        most = Math.max(most, ++inFlight);
        try {
          return await api.runGetMethod(...args);
        } finally {
          inFlight--;
        }
      },
    };
    const source = createTonSource({ api: counted, testnet: false, jettonMasters: [node.usdt.master.toString()], getMethodConcurrency: 4 });
    const poll = async (addresses: string[]) => {
      node.mine(1);
      const at = BigInt(node.seqno());
      await source.fetchRange(at, at, { addresses: new Set(addresses), paymentContract: null });
    };
    const first = Array.from({ length: 24 }, () => deposit(fresh()));
    await poll(first);
    assert.equal(calls, 24, 'one get_wallet_address per new deposit');
    assert.ok(most > 1 && most <= 4, `at most 4 in flight (saw ${most})`);
    await poll(first);
    assert.equal(calls, 24, 'nothing asked again while they stay watched');
    const next = [...first.slice(0, 5), ...Array.from({ length: 3 }, () => deposit(fresh()))];
    await poll(next);
    assert.equal(calls, 27);
    assert.equal(source.jettonWalletsKept(), 8, 'payments no longer watched are forgotten');

    // A receipt on the wallet the master named is the deposit's.
    const owner = fresh();
    const to = BigInt(node.seqno()) + 1n;
    await node.sendJetton(node.usdt, owner, 7n, 0n);
    const range = await source.fetchRange(to, BigInt(node.seqno()), { addresses: new Set([deposit(owner)]), paymentContract: null });
    assert.deepEqual(range.transfers.map((x) => [x.to, x.token, x.amount]), [[deposit(owner), node.usdt.master.toString(), 7n]]);
  });

  test('testnet: its own defaults, and addresses with the test-only flag are the same deposit', () => {
    const registry = resolveChains({});
    const testnet = getNetwork(registry, 'ton', true);
    const mainnet = getNetwork(registry, 'ton', false);
    assert.deepEqual([testnet.network, testnet.rpcUrl, TON_GLOBAL_IDS[testnet.network]], ['TESTNET', 'https://testnet.toncenter.com', -3]);
    assert.deepEqual([mainnet.network, mainnet.rpcUrl, TON_GLOBAL_IDS[mainnet.network]], ['MAINNET', 'https://toncenter.com', -239]);
    const a = fresh();
    const stored = validateAddress('ton', a.toRawString(), true);
    assert.match(stored, /^0Q/, 'a testnet deposit is shown non-bounceable with the test-only flag');
    const forms = [stored, a.toString({ testOnly: true }), a.toString({ testOnly: true, bounceable: false, urlSafe: false }), a.toString(), a.toRawString(), a.toRawString().toUpperCase()];
    assert.equal(new Set(forms.map(raw)).size, 1, 'every form is one deposit');
    assert.throws(() => validateAddress('ton', a.toString({ testOnly: true }), false), /testnet-only/);
  });
});
