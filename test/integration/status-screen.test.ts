import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IndexerCursor } from '../../src/store/entities/indexer-cursor.entity.ts';
import { Invoice } from '../../src/store/entities/invoice.entity.ts';
import { MerchantPoint } from '../../src/store/entities/merchant-point.entity.ts';
import { Payment } from '../../src/store/entities/payment.entity.ts';
import { nextReference } from '../../src/store/reference-ids.ts';
import { ormExecutor } from '../../src/store/transaction.ts';
import { openDatabase } from '../../src/store/orm.ts';
import { NO_BLOCK_YET } from '../../src/domain/lifecycle.ts';
import { BIN, runCli } from '../helpers/cli.ts';
import { createTestDatabase } from '../helpers/databases.ts';
import { waitFor } from '../helpers/indexer-process.ts';

// The full-screen status view as a person meets it: `chaingate status --watch` in a real terminal
// (a tmux pane, 140x40), read off the rendered screen, driven with keys.

test('status --watch: a live full-screen view with indexers (stale marked), pools (low marked), errors; keys switch views; q quits', async (t) => {
  const tdb = await createTestDatabase('sqlite');
  t.after(() => tdb.drop());
  const env = { CHAINGATE_DATABASE_URL: tdb.url, CHAINGATE_MASTER_KEY: 'f'.repeat(64) };
  const merchantId = (JSON.parse((await runCli(['merchant', 'create', '--name', 'Screen Shop', '--json'], env)).stdout) as { id: string }).id;
  const pool = join(mkdtempSync(join(tmpdir(), 'cg-tui-')), 'pool.txt');
  writeFileSync(pool, ['0x3000000000000000000000000000000000000001', '0x3000000000000000000000000000000000000002'].join('\n'));
  await runCli(['wallets', 'seed', '--chain', 'ethereum', '--file', pool], env);
  const db = await openDatabase(tdb.url);
  const em = db.em();
  // An indexer that stopped polling ten minutes ago, and one failing since a minute ago before its first block.
  em.create(IndexerCursor, {
    chain: 'polygon', network: 'MAINNET', blockNumber: '500', blockHash: '0x1', blockTime: null, headNumber: '530', finalizedNumber: null,
    headSeenAt: new Date(Date.now() - 600_000), leaseOwner: null, leaseUntil: null, lastError: null, lastErrorAt: null,
  });
  em.create(IndexerCursor, {
    chain: 'ethereum', network: 'MAINNET', blockNumber: '-1', blockHash: NO_BLOCK_YET, blockTime: null, headNumber: null, finalizedNumber: null, headSeenAt: null,
    leaseOwner: null, leaseUntil: null, lastError: 'eth_chainId at http://127.0.0.1:1 failed 7 times: connect ECONNREFUSED 127.0.0.1:1', lastErrorAt: new Date(Date.now() - 60_000), lastErrorSeenAt: new Date(), updatedAt: new Date(0),
  });
  await em.flush();
  await db.close();

  const socket = `cg-${process.pid}`;
  const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
  t.after(() => {
    spawnSync('tmux', ['-L', socket, 'kill-server']);
  });
  const command = `env ${Object.entries(env).map(([k, v]) => `${k}='${v}'`).join(' ')} TERM=xterm-256color '${process.execPath}' '${BIN}' status --watch 1`;
  tmux('new-session', '-d', '-s', 'cg', '-x', '140', '-y', '40', command);
  const screen = () => tmux('capture-pane', '-p', '-t', 'cg');
  const shows = (what: RegExp) => waitFor(`the screen to show ${what}`, async () => (what.test(screen()) ? screen() : null), 20_000, 100).catch((err: unknown) => {
    throw new Error(`${String(err)}\n--- screen ---\n${screen()}`);
  });

  const overview = await shows(/payments\s+none/);
  assert.match(overview, /chaingate status — \d{4}-/);
  assert.match(overview, /1 overview .* 2 indexers .* 3 pools .* 4 errors/);
  assert.match(overview, /indexers\s+2 known, 1 FAILING: ethereum MAINNET; 1 stale: polygon MAINNET/);
  assert.match(overview, /pools\s+1 pools, 1 low: ethereum 2 free/);
  assert.match(overview, /errors\s+1 in the last 15 minutes/);

  // Live: a payment opened by another process shows up at the next refresh, with no key pressed.
  const other = await openDatabase(tdb.url);
  try {
    const em2 = other.em();
    const invoice = em2.create(Invoice, {
      referenceId: await nextReference(ormExecutor(em2, db.dialect), 'INV'), merchant: em2.getReference(MerchantPoint, merchantId), orderId: 'live-1', amount: '2500', currency: 'USD',
      status: 'PAYMENT_PENDING', customerEmail: null, customerName: null, customerMetadata: {}, metadata: {}, returnUrl: null, cancelUrl: null,
      expiresAt: new Date(Date.now() + 3_600_000), viewedAt: null, paidAt: null, cancelledAt: null,
    });
    await em2.flush();
    em2.create(Payment, {
      referenceId: await nextReference(ormExecutor(em2, db.dialect), 'PAY'), invoice, merchant: em2.getReference(MerchantPoint, merchantId), blockchain: 'ethereum', network: 'MAINNET',
      cryptoCurrency: 'ETH', decimals: 18, tokenAddress: null, amount: '0.01', expectedAmount: '0.01', receivedAmount: '0', address: '0x3000000000000000000000000000000000000001',
      requiredConfirmations: 12, transactionHash: null, blockNumber: null, contractAddress: null, externalId: null, externalIdUuid: null, metadata: {},
      expiresAt: new Date(Date.now() + 1_800_000), completedAt: null,
    });
    await em2.flush();
  } finally {
    await other.close();
  }
  const live = await shows(/payments\s+PENDING 1/);
  assert.match(live, /invoices\s+PAYMENT_PENDING 1/);
  assert.doesNotMatch(live, /payments\s+none/);

  tmux('send-keys', '-t', 'cg', '2');
  const indexers = await shows(/HEIGHT/);
  assert.match(indexers, /polygon\s+MAINNET\s+STALE\s+500\s+530\s+30\s+\d+ s\s*\n/);
  assert.match(indexers, /ethereum\s+MAINNET\s+FAILING\s+-\s+-\s+-\s+-\s+eth_chainId at http:\/\/127\.0\.0\.1:1 failed 7 times/);
  assert.match(indexers, /failing since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \(\d+ s ago\)\s+endpoint https:\/\/\S+/);
  assert.match(indexers, /eth_chainId at http:\/\/127\.0\.0\.1:1 failed 7 times: connect ECONNREFUSED 127\.0\.0\.1:1/);

  tmux('send-keys', '-t', 'cg', '3');
  assert.match(await shows(/LEASED/), /ethereum\s+MAINNET\s+2\s+0\s+2\s+LOW \(under 20\)/);

  tmux('send-keys', '-t', 'cg', 'Tab');
  assert.match(await shows(/indexer ethereum MAINNET/), /connect ECONNREFUSED 127\.0\.0\.1:1/);

  tmux('send-keys', '-t', 'cg', 'q');
  await waitFor('the view to quit', async () => spawnSync('tmux', ['-L', socket, 'has-session', '-t', 'cg']).status !== 0, 10_000, 100);
});
