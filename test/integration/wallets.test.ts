import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HDNodeWallet, Mnemonic } from 'ethers';
import { openDatabase } from '../../src/store/orm.ts';
import { addToPool } from '../../src/store/wallet-pool.ts';
import { leasePoolAddress } from '../../src/store/lifecycle.ts';
import { UsageError } from '../../src/domain/errors.ts';
import { assertPublicKeyMaterial } from '../../src/families/key-material.ts';
import { runCli } from '../helpers/cli.ts';
import { DIALECTS, openMigratedTestDatabase, skipUnless } from '../helpers/databases.ts';
import { secretKeyForms } from '../../src/families/families.ts';

const PHRASE = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const EVM_ACCOUNT_XPUB = HDNodeWallet.fromMnemonic(Mnemonic.fromPhrase(PHRASE), "m/44'/60'/0'").neuter().extendedKey;
const BIP84_ZPUB = 'zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs';
// BIP86 test vector: the account key m/86'/0'/0' of the abandon … about mnemonic.
const BIP86_XPUB = 'xpub6BgBgsespWvERF3LHQu6CnqdvfEvtMcQjYrcRzx53QJjSxarj2afYWcLteoGVky7D3UKDP9QyrLprQ3VCECoY49yfdDEHGCtMMj92pReUsQ';
const SOL = ['11111111111111111111111111111111', 'So11111111111111111111111111111111111111112', 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v'];

function workspace(t: { after(fn: () => void): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'cg-wallets-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return { dir, env: { CHAINGATE_DATABASE_URL: `sqlite:${join(dir, 'cg.db')}` } };
}

describe('chaingate wallets CLI', () => {
  test('seed derives 0/i from an account xpub, continues where it stopped, skips duplicates', async (t) => {
    const { env } = workspace(t);
    const first = await runCli(['wallets', 'seed', '--chain', 'ethereum', '--xpub', EVM_ACCOUNT_XPUB, '--count', '5', '--json'], env);
    assert.equal(first.code, 0, first.stderr);
    assert.deepEqual(JSON.parse(first.stdout), {
      chain: 'ethereum',
      network: 'MAINNET',
      isTestnet: false,
      source: JSON.parse(first.stdout).source,
      start: 0,
      added: 5,
      skipped: 0,
      free: 5,
      first: { index: 0, path: "m/44'/60'/0'/0/0", address: '0x9858EfFD232B4033E47d90003D41EC34EcaEda94' },
      last: { index: 4, path: "m/44'/60'/0'/0/4", address: '0x51cA8ff9f1C0a99f88E86B8112eA3237F55374cA' },
    });
    const next = JSON.parse((await runCli(['wallets', 'seed', '--chain', 'ethereum', '--xpub', EVM_ACCOUNT_XPUB, '--count', '3', '--json'], env)).stdout);
    assert.deepEqual([next.start, next.added, next.free], [5, 3, 8]);
    const again = JSON.parse((await runCli(['wallets', 'seed', '--chain', 'ethereum', '--xpub', EVM_ACCOUNT_XPUB, '--count', '2', '--start', '0', '--json'], env)).stdout);
    assert.deepEqual([again.added, again.skipped, again.free], [0, 2, 8]);
    const polygon = JSON.parse((await runCli(['wallets', 'seed', '--chain', 'polygon', '--xpub', EVM_ACCOUNT_XPUB, '--count', '2', '--json'], env)).stdout);
    assert.deepEqual([polygon.added, polygon.free], [2, 2], 'the same xpub seeds another chain into its own pool');
    const btc = await runCli(['wallets', 'seed', '--chain', 'bitcoin', '--xpub', BIP84_ZPUB, '--count', '2', '--json'], env);
    assert.equal(btc.code, 0, btc.stderr);

    const db = await openDatabase(env.CHAINGATE_DATABASE_URL);
    t.after(() => db.close());
    const rows = await db.em().execute<{ address: string; derivation_index: number }[]>("select address, derivation_index from wallet_address where chain = 'ethereum' order by derivation_index");
    assert.equal(rows[0]!.address, '0x9858EfFD232B4033E47d90003D41EC34EcaEda94', 'BIP44 vector at 0/0, EIP-55 checksummed');
    assert.deepEqual(rows.map((r) => Number(r.derivation_index)), [0, 1, 2, 3, 4, 5, 6, 7]);
    const btcRows = await db.em().execute<{ address: string }[]>("select address from wallet_address where chain = 'bitcoin' order by derivation_index");
    assert.deepEqual(btcRows.map((r) => r.address), ['bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu', 'bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g']);

    const list = JSON.parse((await runCli(['wallets', 'list', '--json'], env)).stdout) as { chain: string; network: string; free: number; leased: number; total: number }[];
    assert.deepEqual(list.find((r) => r.chain === 'ethereum'), { chain: 'ethereum', isTestnet: false, free: 8, leased: 0, total: 8, network: 'MAINNET' });
    const human = await runCli(['wallets', 'list', '--chain', 'polygon'], env);
    assert.match(human.stdout, /polygon\s+MAINNET\s+2\s+0\s+2/);
  });

  test('bitcoin taproot: --script p2tr derives BIP86 bc1p… from an xpub as its own series; --file takes bc1p… lines; wrong keys and encodings are refused', async (t) => {
    const { dir, env } = workspace(t);
    const seed = async (...args: string[]) => runCli(['wallets', 'seed', '--chain', 'bitcoin', ...args], env);
    const taproot = await seed('--xpub', BIP86_XPUB, '--script', 'p2tr', '--count', '2', '--json');
    assert.equal(taproot.code, 0, taproot.stderr);
    const out = JSON.parse(taproot.stdout);
    assert.match(out.source, /^p2tr:[0-9a-f]{16}$/);
    assert.deepEqual([out.start, out.added], [0, 2]);
    // The same key without --script is a P2WPKH series of its own: it starts at 0 again.
    const segwit = JSON.parse((await seed('--xpub', BIP86_XPUB, '--count', '1', '--json')).stdout);
    assert.deepEqual([segwit.start, segwit.added, segwit.free], [0, 1, 3]);
    assert.notEqual(segwit.source, out.source);
    const more = JSON.parse((await seed('--xpub', BIP86_XPUB, '--script', 'p2tr', '--count', '1', '--json')).stdout);
    assert.equal(more.start, 2, 'the taproot series continues where it stopped');

    const file = join(dir, 'taproot.txt');
    writeFileSync(file, '# BIP350 test vector (G as the output key), upper case as a QR code carries it\nBC1P0XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQZK5JJ0\n');
    assert.equal(JSON.parse((await seed('--file', file, '--json')).stdout).added, 1);

    const db = await openDatabase(env.CHAINGATE_DATABASE_URL);
    t.after(() => db.close());
    const rows = await db.em().execute<{ address: string }[]>("select address from wallet_address where chain = 'bitcoin' and source like 'p2tr:%' order by derivation_index");
    assert.deepEqual(rows.map((r) => r.address), [
      'bc1p5cyxnuxmeuwuvkwfem96lqzszd02n6xdcjrs20cac6yqjjwudpxqkedrcr',
      'bc1p4qhjn9zdvkux4e44uhx8tc55attvtyu358kutcqkudyccelu0was9fqzwh',
      'bc1p0d0rhyynq0awa9m8cqrcr8f5nxqx3aw29w4ru5u9my3h0sfygnzs9khxz8', // m/86'/0'/0'/0/2, by private derivation
    ]);
    const listed = await db.em().execute<{ address: string }[]>("select address from wallet_address where source = 'file'");
    assert.deepEqual(listed.map((r) => r.address), ['bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0'], 'stored in lower case');

    const refusals: Array<[string[], RegExp]> = [
      [['--xpub', BIP84_ZPUB, '--script', 'p2tr', '--count', '1'], /a zpub is a BIP84 native segwit key/],
      [['--xpub', BIP86_XPUB, '--script', 'p2sh', '--count', '1'], /--script must be one of p2wpkh, p2tr/],
      [['--xpub', `tr(${BIP86_XPUB}/0/*)`, '--script', 'p2tr', '--count', '1'], /output descriptor/],
      [['--file', file, '--script', 'p2tr'], /--script goes with --xpub/],
    ];
    for (const [args, reason] of refusals) {
      const res = await seed(...args);
      assert.equal(res.code, 2, args.join(' '));
      assert.match(res.stderr, reason);
    }
    const evm = await runCli(['wallets', 'seed', '--chain', 'ethereum', '--xpub', EVM_ACCOUNT_XPUB, '--script', 'p2tr', '--count', '1'], env);
    assert.equal(evm.code, 2);
    assert.match(evm.stderr, /--script chooses between bitcoin output types/);

    // A v1 address with the old bech32 checksum, and one with a typo: nothing of the file is added.
    const bad = join(dir, 'bad-taproot.txt');
    writeFileSync(bad, 'bc1p5cyxnuxmeuwuvkwfem96lqzszd02n6xdcjrs20cac6yqjjwudpxqkedrcr\nbc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqh2y7hd\nbc1p5cyxnuxmeuwuvkwfem96lqzszd02n6xdcjrs20cac6yqjjwudpxqkedrcq\n');
    const refused = await seed('--file', bad);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /2 invalid line\(s\), nothing was added/);
    assert.match(refused.stderr, /line 2: .*bech32m checksum \(BIP350\)/);
    assert.match(refused.stderr, /line 3: .*checksum does not match/);
  });

  test('seed --file validates every line, skips duplicates, and refuses a file with a bad line', async (t) => {
    const { dir, env } = workspace(t);
    const good = join(dir, 'sol.txt');
    writeFileSync(good, `# devnet-free list\n${SOL[0]}\n${SOL[1]}\n\n${SOL[1]}\n${SOL[2]}\n`);
    const res = JSON.parse((await runCli(['wallets', 'seed', '--chain', 'solana', '--file', good, '--json'], env)).stdout);
    assert.deepEqual([res.added, res.skipped, res.free], [3, 1, 3]);
    const bad = join(dir, 'bad.txt');
    writeFileSync(bad, `${SOL[0]}\nnot-an-address\n0x9858EfFD232B4033E47d90003D41EC34EcaEda94\n`);
    const refused = await runCli(['wallets', 'seed', '--chain', 'solana', '--file', bad], env);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /2 invalid line\(s\), nothing was added/);
    assert.match(refused.stderr, /line 2/);
    assert.match(refused.stderr, /line 3/);
    const ton = await runCli(['wallets', 'seed', '--chain', 'ton', '--xpub', EVM_ACCOUNT_XPUB, '--count', '1'], env);
    assert.equal(ton.code, 2, 'ton keys cannot be derived from a public parent');
  });

  test('private keys and seed phrases are refused and never echoed', async (t) => {
    const { env } = workspace(t);
    const xprv = HDNodeWallet.fromMnemonic(Mnemonic.fromPhrase(PHRASE), "m/44'/60'/0'").extendedKey;
    // The refusal `wallets seed` makes of what it is handed, in-process for each kind of secret…
    for (const secret of [xprv, PHRASE, '4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318']) {
      assert.throws(() => assertPublicKeyMaterial(secret, secretKeyForms()), (err: unknown) => {
        assert.ok(err instanceof UsageError);
        assert.match(err.message, /watch-only/);
        assert.ok(!err.message.includes(secret) && !err.message.includes(secret.slice(5, 25)), 'the secret is not repeated');
        return true;
      });
    }
    // …and through the real binary for one: exit code 2, and neither output repeats it.
    const res = await runCli(['wallets', 'seed', '--chain', 'ethereum', '--xpub', xprv, '--count', '1'], env);
    assert.equal(res.code, 2);
    assert.match(res.stderr, /watch-only/);
    assert.ok(!res.stderr.includes(xprv) && !res.stdout.includes(xprv), 'the secret is not repeated');
    assert.ok(!res.stderr.includes(xprv.slice(5, 25)));
    const bad = await runCli(['wallets', 'seed', '--chain', 'dogecoin', '--file', '/dev/null'], env);
    assert.equal(bad.code, 2);
    const both = await runCli(['wallets', 'seed', '--chain', 'ethereum'], env);
    assert.equal(both.code, 2);
  });
});

for (const dialect of DIALECTS) {
  describe(`wallet pool leasing on ${dialect}`, { skip: await skipUnless(dialect) }, () => {
    test('50 parallel leases get 50 distinct addresses; an empty pool leases nothing', async (t) => {
      const db = await openMigratedTestDatabase(t, dialect);
      const pool = { chain: 'ethereum', isTestnet: false };
      const addresses = Array.from({ length: 50 }, (_, i) => `0x${(i + 1).toString(16).padStart(40, '0')}`);
      await db.write((x) => addToPool(x, pool, 'test', addresses.map((address, index) => ({ address, index }))));
      const leased = await Promise.all(
        Array.from({ length: 50 }, (_, i) => db.write((x) => leasePoolAddress(x, pool, `pay${i}`, new Date()))),
      );
      assert.equal(leased.filter(Boolean).length, 50);
      assert.equal(new Set(leased.map((l) => l!.address)).size, 50);
      const none = await db.write((x) => leasePoolAddress(x, pool, 'pay-extra', new Date()));
      assert.equal(none, null);
      const testnet = await db.write((x) => leasePoolAddress(x, { chain: 'ethereum', isTestnet: true }, 'pay-t', new Date()));
      assert.equal(testnet, null, 'pools are per network');
    });
  });
}
