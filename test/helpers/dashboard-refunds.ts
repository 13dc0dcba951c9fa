import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HDNodeWallet, Mnemonic } from 'ethers';
import { parseUnits } from '../../src/domain/money.ts';
import { Payment } from '../../src/store/entities/payment.entity.ts';
import { cliIn } from './bitcoin-pool.ts';
import type { DialectName } from './databases.ts';
import { startEvmWorld, type EvmWorld } from './evm-world.ts';
import { waitFor, writeConfigFile } from './indexer-process.ts';

// A shop on a Hardhat chain posing as ethereum mainnet, for the dashboard's refunds and sweeps:
// serve following broadcasts every second, a real `chaingate index ethereum`, the pool seeded from
// an xpub whose phrase sits in a seed file for the real `chaingate sweep sign`, and a helper that
// pays a checkout (over-paying on request) and waits for COMPLETED.

export const PHRASE = 'legal winner thank year wave sausage worth useful legal winner thank yellow';
const account = HDNodeWallet.fromSeed(Mnemonic.fromPhrase(PHRASE).computeSeed()).derivePath("m/44'/60'/0'");

export interface MoneyWorld {
  w: EvmWorld;
  dir: string;
  seedFile: string;
  /** The real `chaingate` binary in `dir` with the world's env. */
  ok(args: string[]): Promise<{ stdout: string; stderr: string }>;
  /** A checkout in ETH paid with `extra` wei more than asked, COMPLETED. */
  paidEth(orderId: string, extra: bigint): Promise<{ id: string; address: string; paid: bigint; expected: bigint }>;
  payment(id: string): Promise<Payment>;
  /** `chaingate sweep sign` of a downloaded plan file, offline (no database in its env). */
  sign(planFile: string, signedFile: string, expectTo: string): Promise<void>;
}

export async function startMoneyWorld(t: { after(fn: () => Promise<void> | void): void }, dialect: DialectName, pool = 4): Promise<MoneyWorld> {
  const w = await startEvmWorld(t, { dialect, confirmations: 2, followBroadcasts: true, daemon: { dashboard: { followBroadcastsCron: '* * * * * *' } } });
  const dir = mkdtempSync(join(tmpdir(), 'chaingate-dashboard-money-'));
  const env = { ...w.env, CHAINGATE_CONFIG: writeConfigFile({ chains: w.chains, indexer: w.indexerConfig, log: { level: 'warn' } }) };
  const { ok, cli } = cliIn(env, dir);
  await ok(['wallets', 'seed', '--chain', 'ethereum', '--xpub', account.neuter().extendedKey, '--count', String(pool)]);
  const seedFile = join(dir, 'seed.txt');
  writeFileSync(seedFile, `${PHRASE}\n`, { mode: 0o600 });
  const proc = w.startIndexer();
  await waitFor('indexer start', async () => proc.output().includes('indexer started'), 60_000).catch((err: unknown) => {
    throw new Error(`${String(err)}\n${proc.output().slice(-2000)}`);
  });
  const mining = setInterval(() => void w.node.mine(1).catch(() => {}), 250);
  t.after(() => clearInterval(mining));
  const payment = (id: string) => w.d.common.db.em().findOneOrFail(Payment, { id }, { refresh: true });
  return {
    w,
    dir,
    seedFile,
    ok,
    payment,
    async paidEth(orderId, extra) {
      const inv = await w.d.signed('POST', '/api/v1/invoices', { orderId, amount: '2500', currency: 'USD' });
      const co = await w.d.plain('POST', `/checkout/api/v1/invoices/${inv.json.data.id}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'ETH' });
      assert.equal(co.status, 201, co.text);
      const p = co.json.data.payment as { id: string; paymentAddress: string; amount: string };
      const expected = parseUnits(p.amount, 18);
      await (await w.fx.payer.sendTransaction({ to: p.paymentAddress, value: expected + extra })).wait();
      await waitFor(`payment ${p.id} COMPLETED`, async () => (await payment(p.id)).status === 'COMPLETED', 30_000);
      return { id: p.id, address: p.paymentAddress, paid: expected + extra, expected };
    },
    async sign(planFile, signedFile, expectTo) {
      // `sweep sign` opens no database, configuration or chain client, whatever the environment holds.
      const r = await cli(['sweep', 'sign', '--plan', planFile, '--out', signedFile, '--seed-file', seedFile, '--expect-to', expectTo, '--yes']);
      assert.equal(r.code, 0, r.stderr);
    },
  };
}
