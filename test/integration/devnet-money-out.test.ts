import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Contract, JsonRpcProvider } from 'ethers';
import { CREATE2_DEPLOYER, SWEEPER_ADDRESS } from '../../src/families/evm/sweep-payload.ts';
import { signRequest } from '../../src/sdk/sign-request.ts';
import { BIN } from '../helpers/cli.ts';
import { trackChild } from '../helpers/children.ts';
import { docBlocks, runShell } from '../helpers/doc-examples.ts';
import { eventually } from '../helpers/webhook-receiver.ts';

// Issue 42, item 4: money out on the devnet, as docs/devnet.md#money-out tells it. `chaingate
// devnet` (the real process), a USDT payment by `devnet pay`, then the documentation's own block
// run by bash: a refund and a sweep planned, signed with the printed seed file and broadcast; the
// chain shows the buyer's 5 USDT and the cold wallet's 20. Ctrl-C leaves no temporary folder.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const REFUNDED_TO = '0x000000000000000000000000000000000000b0b1';
const COLD = '0x000000000000000000000000000000000000C01D';

interface State {
  baseUrl: string;
  invoiceId: string;
  rpcUrl: string;
  dir: string;
  tokens: { USDT: string };
  merchant: { apiKey: string; apiSecret: string };
  signer: { seedFile: string; feePayer: string; warning: string };
}

test('devnet money out: the documented refund and sweep run against a live devnet; Ctrl-C cleans up', async (t) => {
  const cwd = mkdtempSync(join(tmpdir(), 'cg-devnet-out-'));
  t.after(() => rmSync(cwd, { recursive: true, force: true }));
  const { NODE_TEST_CONTEXT: _ctx, ...env } = process.env;
  const devnet = spawn(process.execPath, [BIN, 'devnet', '--json'], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  trackChild(devnet);
  let out = '';
  devnet.stdout.on('data', (b: Buffer) => (out += b));
  devnet.stderr.on('data', (b: Buffer) => (out += b));
  const exited = new Promise<number | null>((r) => devnet.once('exit', (code) => r(code)));
  // A failed assertion still stops the devnet as Ctrl-C would: its serve and indexer with it
  // (a SIGKILL would leave them running on the temporary folder).
  t.after(async () => {
    if (devnet.exitCode !== null || devnet.signalCode !== null) return;
    devnet.kill('SIGINT');
    await exited;
  });
  const state = await eventually(() => {
    if (devnet.exitCode !== null) throw new Error(`devnet exited:\n${out}`);
    const first = out.split('\n').find((l) => l.startsWith('{"baseUrl"'));
    return first ? (JSON.parse(first) as State) : undefined;
  }, 120_000, 100);

  // What money out needs, printed: a seed file only its owner reads, with the test-only warning.
  assert.equal(statSync(state.signer.seedFile).mode & 0o777, 0o600);
  assert.match(state.signer.warning, /^TEST ONLY: Hardhat's public test phrase/);
  const provider = new JsonRpcProvider(state.rpcUrl, 31_337, { staticNetwork: true });
  t.after(() => provider.destroy());
  assert.notEqual(await provider.getCode(CREATE2_DEPLOYER), '0x', 'the CREATE2 proxy is deployed');
  assert.ok((await provider.getBalance(state.signer.feePayer)) > 0n, 'the fee payer is funded');

  const pay = spawnSync(process.execPath, [BIN, 'devnet', 'pay', state.invoiceId, '--json'], { cwd, env, encoding: 'utf8' });
  assert.equal(pay.status, 0, pay.stderr);
  const { paymentId } = JSON.parse(pay.stdout) as { paymentId: string };
  await eventually(async () => {
    const path = `/api/v1/payments/${paymentId}/status`;
    const res = await fetch(state.baseUrl + path, { headers: signRequest({ apiKey: state.merchant.apiKey, apiSecret: state.merchant.apiSecret, method: 'GET', path }) });
    return ((await res.json()) as { data: { status: string } }).data.status === 'COMPLETED' ? true : undefined;
  }, 60_000, 250);

  // The documentation's block, as written, with `chaingate` on PATH and $PAYMENT set as it says.
  const [block] = docBlocks(ROOT).filter((b) => b.file === 'docs/devnet.md' && b.body.startsWith('eval "$(chaingate devnet env)"'));
  assert.ok(block, 'docs/devnet.md has the money-out block');
  const bin = join(cwd, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'chaingate'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
  chmodSync(join(bin, 'chaingate'), 0o755);
  const run = await runShell(block.body, { cwd, env: { ...(env as Record<string, string>), PATH: `${bin}:${env.PATH}`, PAYMENT: paymentId }, timeoutMs: 120_000 });
  assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
  assert.match(run.stdout, /every transaction is final/);

  const usdt = new Contract(state.tokens.USDT, ['function balanceOf(address) view returns (uint256)'], provider);
  assert.equal(await usdt.getFunction('balanceOf')(REFUNDED_TO), 5_000_000n, 'the buyer got 5 USDT back');
  assert.equal(await usdt.getFunction('balanceOf')(COLD), 20_000_000n, 'the cold wallet got the other 20');
  assert.notEqual(await provider.getCode(SWEEPER_ADDRESS), '0x', 'the Sweeper was placed through the proxy');
  assert.match(run.stdout, /ethereum\s+DEVNET/, 'sweep list shows the sweep');

  devnet.kill('SIGINT');
  assert.equal(await exited, 0, out);
  assert.equal(existsSync(state.dir), false, `the devnet's temporary folder ${state.dir} is removed`);
  assert.equal(existsSync(join(cwd, 'data', 'devnet.json')), false, 'and the state file that pointed at it');
});
