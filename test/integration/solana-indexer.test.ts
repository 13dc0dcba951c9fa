import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { IndexerCursor } from '../../src/store/entities/indexer-cursor.entity.ts';
import { Invoice } from '../../src/store/entities/invoice.entity.ts';
import { ObservedTransfer } from '../../src/store/entities/observed-transfer.entity.ts';
import { runCli } from '../helpers/cli.ts';
import { waitFor, writeConfigFile } from '../helpers/indexer-process.ts';
import { createHttpClient } from '../../src/families/http-client.ts';
import { createSolanaSource } from '../../src/families/solana/solana-source.ts';
import { associatedTokenAccounts } from '../../src/families/solana/token-accounts.ts';
import { createLogger } from '../../src/logger.ts';
import { key, startSolanaSim, TOKEN_2022_PROGRAM } from '../helpers/solana-sim.ts';
import { startSolanaWorld } from '../helpers/solana-world.ts';

describe('solana indexer against a JSON-RPC cluster (separate indexer process)', () => {
  test('SOL and USDC deposits, skipped slots, failed transactions, lookup tables and a fork switch', async (t) => {
    const sim = await startSolanaSim();
    t.after(() => sim.close());
    for (let i = 0; i < 5; i++) sim.produce();
    const mint = key();
    const { d, env, indexerConfig: indexer, proc, open, payment, waitStatus } = await startSolanaWorld(t, { dialect: 'sqlite', rpcUrl: sim.url, mint, confirmations: 3, maxBlocksPerRange: 10, rpcTimeoutMs: 1000, poolSize: 10 });

    await t.test('a SOL transfer completes after the confirmations; a failed one is ignored', async () => {
      const p = await open('SOL');
      assert.equal(p.amount, '0.166666667', '25.00 USD at 150 USD/SOL, rounded up to 9 decimals');
      sim.produce({ sol: [{ to: p.address, lamports: 166_666_667n, failed: true }] });
      sim.skip(2);
      const [sig] = sim.produce({ sol: [{ to: p.address, lamports: 166_666_667n }] });
      const seen = await waitStatus(p.id, ['PROCESSING', 'CONFIRMING']);
      assert.equal(seen.transactionHash, sig);
      assert.equal(seen.receivedAmount, '0.166666667');
      sim.skip(1);
      sim.produce();
      sim.produce();
      const done = await waitStatus(p.id, ['COMPLETED']);
      assert.ok(done.confirmations >= 3);
      assert.equal((await d.common.db.em().findOneOrFail(Invoice, { id: p.invoice.id })).status, 'PAID');
      assert.equal(await d.common.db.em().count(ObservedTransfer, { paymentId: p.id }), 1, 'the failed transaction moved nothing');
    });

    await t.test('USDC to the owner (into a new and an existing token account) is summed; a look-alike mint is not credited', async () => {
      const p = await open('USDC');
      sim.produce({ tokens: [{ owner: p.address, mint, amount: 20_000_000n }] });
      sim.produce({ tokens: [{ owner: p.address, mint, amount: 5_000_000n, before: 20_000_000n }, { owner: p.address, mint: key(), amount: 99_000_000n }] });
      await waitFor('two credits', async () => (await payment(p.id)).receivedAmount === '25');
      const rows = await d.common.db.em().find(ObservedTransfer, { paymentId: p.id });
      assert.deepEqual(rows.map((r) => r.status).sort(), ['CREDITED', 'CREDITED', 'NOT_CREDITED']);
      sim.skip(3);
      sim.produce();
      sim.produce();
      sim.produce();
      assert.equal((await waitStatus(p.id, ['COMPLETED'])).receivedAmount, '25');
    });

    await t.test('a recipient loaded through an address lookup table (v0 transaction) is found', async () => {
      const p = await open('SOL');
      sim.produce({ sol: [{ to: p.address, lamports: 166_666_667n, viaLookupTable: true }] });
      assert.equal((await waitStatus(p.id, ['PROCESSING', 'CONFIRMING'])).receivedAmount, '0.166666667');
    });

    await t.test('a fork switch un-credits a deposit', async () => {
      const p = await open('SOL');
      sim.produce({ sol: [{ to: p.address, lamports: 166_666_667n }] });
      await waitStatus(p.id, ['PROCESSING', 'CONFIRMING']);
      sim.rewind(1);
      sim.produce();
      sim.produce();
      const back = await waitStatus(p.id, ['PENDING']);
      assert.equal(back.receivedAmount, '0');
      assert.equal((await d.common.db.em().findOneOrFail(ObservedTransfer, { paymentId: p.id })).status, 'REORGED');
    });

    await t.test('Token-2022 USDC and a 1,200-transaction block; slots not yet available (-32004) keep what was read; completion waits for the finalized slot', async () => {
      const p = await open('USDC');
      const cursor = async () => BigInt((await d.common.db.em().findOne(IndexerCursor, { chain: 'solana' }, { refresh: true }))?.blockNumber ?? '-1');
      sim.setFinalityLag(50);
      sim.produce({ filler: 1200, tokens: [{ owner: p.address, mint, amount: 25_000_000n, program: TOKEN_2022_PROGRAM }] });
      const last = sim.slot();
      sim.announce(5); // the node says five more slots exist, but cannot serve them yet
      await waitStatus(p.id, ['PROCESSING', 'CONFIRMING']);
      await waitFor('the cursor at the last served slot', async () => (await cursor()) === BigInt(last), 20_000);
      await new Promise((r) => setTimeout(r, 1500));
      assert.equal(await cursor(), BigInt(last), 'nothing past what the node could serve');
      sim.announce(0);
      for (let i = 0; i < 4; i++) sim.produce();
      await waitFor('confirmations counted', async () => (await payment(p.id)).confirmations >= 3);
      await new Promise((r) => setTimeout(r, 1000));
      assert.equal((await payment(p.id)).status, 'CONFIRMING', 'counted, but not finalized yet');
      sim.setFinalityLag(0);
      sim.produce();
      const done = await waitStatus(p.id, ['COMPLETED']);
      assert.equal(done.receivedAmount, '25');
      assert.equal(proc.output().match(/indexer tick failed/g)?.length ?? 0, 0, 'a slot not yet available is not a fault');
    });

    const cursorAt = async () => BigInt((await d.common.db.em().findOne(IndexerCursor, { chain: 'solana' }, { refresh: true }))?.blockNumber ?? '-1');
    const errorsOf = (code: string) => sim.errors[code] ?? 0;

    await t.test('a skipped slot above the finalized slot answers -32004 (Agave cannot call it skipped before the root): the range ends before it; rooted, it is -32007 and passed over; below the ledger, -32009', async () => {
      const p = await open('SOL');
      sim.setFinalityLag(4);
      const before = { na: errorsOf('-32004'), skipped: errorsOf('-32007') };
      sim.produce({ sol: [{ to: p.address, lamports: 166_666_667n }] });
      const depositSlot = sim.slot();
      sim.skip(1);
      sim.produce();
      sim.produce();
      await waitStatus(p.id, ['PROCESSING', 'CONFIRMING']);
      await waitFor('the cursor at the deposit slot', async () => (await cursorAt()) === BigInt(depositSlot), 20_000);
      await new Promise((r) => setTimeout(r, 1000));
      assert.equal(await cursorAt(), BigInt(depositSlot), 'not past a slot the node cannot serve yet');
      assert.ok(errorsOf('-32004') > before.na, 'the skipped slot above the root answered -32004');
      assert.equal(errorsOf('-32007'), before.skipped, 'never -32007 above the root');
      sim.setFinalityLag(0);
      sim.produce();
      await waitFor('past the skipped slot once it is rooted', async () => (await cursorAt()) >= BigInt(depositSlot + 4), 20_000);
      assert.ok(errorsOf('-32007') > before.skipped, 'rooted, the same slot answers -32007');

      sim.setLedgerFloor(sim.slot() + 100);
      const floorBefore = errorsOf('-32009');
      sim.skip(1);
      sim.produce();
      sim.produce();
      const end = sim.slot();
      await waitFor('past a slot skipped below the ledger', async () => (await cursorAt()) >= BigInt(end), 20_000);
      assert.ok(errorsOf('-32009') > floorBefore, '-32009 read as a skipped slot');
      sim.setLedgerFloor(0);
    });

    await t.test('a null getBlock answer on the last slot of a range is not a skipped slot: the range ends before it and its deposit is read later', async () => {
      const p = await open('SOL');
      sim.setFinalityLag(3);
      const nullSlot = sim.slot() + 1;
      sim.failNext(nullSlot, 'null', 3);
      const nulls = errorsOf('null');
      sim.produce({ sol: [{ to: p.address, lamports: 166_666_667n }] });
      await waitFor('the null answers served', async () => errorsOf('null') >= nulls + 1, 20_000);
      assert.ok((await cursorAt()) < BigInt(nullSlot), 'the cursor never passes an unread block');
      const outputBefore = proc.output().length;
      const seen = await waitStatus(p.id, ['PROCESSING', 'CONFIRMING']);
      assert.equal(seen.receivedAmount, '0.166666667');
      for (let i = 0; i < 3; i++) sim.produce();
      sim.setFinalityLag(0);
      sim.produce();
      await waitStatus(p.id, ['COMPLETED']);
      assert.doesNotMatch(proc.output().slice(outputBefore), /ReorgDuringFetch|does not extend/, 'later ranges link');
    });

    await t.test('-32004 at or below the finalized slot is a fault, not "stop and commit": backed off, read again, nothing skipped', async () => {
      const p = await open('SOL');
      sim.setFinalityLag(0);
      const badSlot = sim.slot() + 1;
      sim.failNext(badSlot, -32004, 3);
      sim.produce({ sol: [{ to: p.address, lamports: 166_666_667n }] });
      sim.produce();
      await waitFor('the fault reported', async () => /block not available at or below the finalized slot/.test(proc.output()), 20_000);
      const seen = await waitStatus(p.id, ['PROCESSING', 'CONFIRMING', 'COMPLETED']);
      assert.equal(seen.receivedAmount, '0.166666667', 'the block was read once the node served it');
      assert.equal(await d.common.db.em().count(ObservedTransfer, { paymentId: p.id }), 1);
    });

    await t.test('an endpoint of another cluster is refused', async () => {
      const wrong = await runCli(['index', 'solana', '--testnet'], { ...env, CHAINGATE_CONFIG: writeConfigFile({ chains: { solana: { testnet: { rpcUrl: sim.url } } }, indexer }) });
      assert.equal(wrong.code, 2);
      assert.match(wrong.stderr, /not solana DEVNET/);
    });

    assert.equal(proc.child.exitCode, null);
    assert.equal(await proc.stop('SIGTERM'), 0);
  });

  test('addresses mode (getSignaturesForAddress on the owner and its token accounts, finalized): SOL and USDC complete', async (t) => {
    const sim = await startSolanaSim();
    t.after(() => sim.close());
    for (let i = 0; i < 3; i++) sim.produce();
    const mint = key();
    const { proc, openDirect, payment } = await startSolanaWorld(t, { dialect: 'sqlite', rpcUrl: sim.url, mint, confirmations: 2, mode: 'addresses', maxBlocksPerRange: 50, rpcTimeoutMs: 1000, poolSize: 3 });
    const sol = await openDirect('SOL');
    const usdc = await openDirect('USDC');
    const [ata] = await associatedTokenAccounts(usdc.address, mint);
    sim.produce({ filler: 50, sol: [{ to: sol.address, lamports: 166_666_667n }], tokens: [{ owner: usdc.address, mint, amount: 25_000_000n, account: ata }] });
    for (let i = 0; i < 3; i++) sim.produce();
    for (const id of [sol.id, usdc.id]) {
      await waitFor('completed', async () => (await payment(id)).status === 'COMPLETED', 30_000);
    }
    assert.equal((await payment(usdc.id)).receivedAmount, '25');
    assert.equal(sim.stats.calls.getBlock !== undefined && sim.stats.calls.getBlock < 40, true, `few getBlock calls: ${sim.stats.calls.getBlock}`);
    assert.ok((sim.stats.calls.getSignaturesForAddress ?? 0) > 0);
    assert.equal(await proc.stop('SIGTERM'), 0);
  });

  test('what each mode costs per slot with 1,000-transaction blocks (measured, printed, recorded in docs/indexers.md)', async (t) => {
    const sim = await startSolanaSim();
    t.after(() => sim.close());
    const owners = Array.from({ length: 10 }, key);
    const mint = key();
    const SLOTS = 20;
    for (let i = 0; i < SLOTS; i++) sim.produce({ filler: 1000, ...(i === 10 ? { sol: [{ to: owners[0]!, lamports: 1_000_000n }] } : {}) });
    const log = createLogger('silent');
    const measure = async (mode: 'blocks' | 'addresses') => {
      const before = { calls: Object.values(sim.stats.calls).reduce((a, b) => a + b, 0), bytes: sim.stats.bytes };
      const source = createSolanaSource({ http: createHttpClient({ baseUrl: sim.url, timeoutMs: 5000, log }), mode, mints: [mint], tokenAccountOf: associatedTokenAccounts });
      const range = await source.fetchRange(1n, BigInt(SLOTS), { addresses: new Set(owners), paymentContract: null });
      assert.equal(range.transfers.length, 1, `${mode}: the one deposit is found`);
      const calls = Object.values(sim.stats.calls).reduce((a, b) => a + b, 0) - before.calls;
      return { calls: calls / SLOTS, bytes: (sim.stats.bytes - before.bytes) / SLOTS, perRange: { calls, bytes: sim.stats.bytes - before.bytes } };
    };
    const blocks = await measure('blocks');
    const addresses = await measure('addresses');
    // Per hour at 2.5 slots a second (9,000 slots).
    const perHour = (x: { calls: number; bytes: number }) => `${Math.round(x.calls * 9000)} calls, ${(x.bytes * 9000 / 1e9).toFixed(2)} GB`;
    t.diagnostic(`blocks mode: ${blocks.calls.toFixed(2)} calls and ${Math.round(blocks.bytes / 1024)} KiB per slot -> ${perHour(blocks)} per hour`);
    t.diagnostic(`addresses mode (10 open payments, one range of ${SLOTS} slots): ${addresses.calls.toFixed(2)} calls and ${Math.round(addresses.bytes)} B per slot`);
    // Addresses mode costs per poll (per account), not per slot: at the default 5-second poll, 720 ranges an hour,
    // plus the tick's own getSlot (head) each poll.
    t.diagnostic(`addresses mode per hour at a 5 s poll: ${Math.round((addresses.perRange.calls + 1) * 720)} calls, ${((addresses.perRange.bytes + 60) * 720 / 1e6).toFixed(1)} MB`);
    assert.ok(blocks.calls >= 1 && blocks.calls < 1.2, 'blocks mode: one getBlock per slot (and the finalized slot per range)');
    assert.ok(blocks.bytes > 150_000, 'a 1,000-transaction block in "accounts" detail is large');
    assert.ok(addresses.bytes < blocks.bytes / 50, 'addresses mode reads a small fraction of the bytes');
  });
});
