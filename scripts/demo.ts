// npm run demo: a demo merchant, pools and an invoice in a separate SQLite database, so the hosted
// payment page can be opened without touching real data. DEMO ONLY: the pools are derived from the
// public BIP39 test phrase "abandon … about", whose funds anybody can spend. Never send real money.
import { writeFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { HDNodeWallet, Mnemonic } from 'ethers';
import { sqlitePath } from '../src/config/database-url.ts';
import { openCommon } from '../src/cli/context.ts';
import { deriveAddresses } from '../src/families/derive.ts';
import { getNetwork} from '../src/chains/registry.ts';
import { createInvoice } from '../src/store/invoices.ts';
import { createMerchant, listMerchants } from '../src/store/merchants.ts';
import { addToPool } from '../src/store/wallet-pool.ts';
import { resolveChains } from '../src/families/families.ts';

const url = process.env.CHAINGATE_DATABASE_URL ?? 'sqlite:./data/demo.db';
const DEMO_MERCHANT = 'Demo Coffee Roasters';
const common = await openCommon({ env: { ...process.env, CHAINGATE_DATABASE_URL: url, CHAINGATE_LOG_LEVEL: 'warn' } });
try {
  const phrase = Mnemonic.fromPhrase('abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about');
  const account = (path: string) => HDNodeWallet.fromMnemonic(phrase, path).neuter().extendedKey;
  const registry = resolveChains(common.config.chains);
  // One account per EVM chain, as docs/wallets.md advises: an address shown for one chain is never
  // shown for another, where a buyer could pay it on the wrong network.
  const keys: Record<string, string> = {
    ethereum: account("m/44'/60'/0'"),
    polygon: account("m/44'/60'/1'"),
    bsc: account("m/44'/60'/2'"),
    arbitrum: account("m/44'/60'/3'"),
    optimism: account("m/44'/60'/4'"),
    base: account("m/44'/60'/5'"),
    avalanche: account("m/44'/60'/6'"),
    tron: account("m/44'/195'/0'"),
    bitcoin: 'zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs',
  };
  for (const [chain, xpub] of Object.entries(keys)) {
    const network = getNetwork(registry, chain, false);
    const entries = deriveAddresses({ family: network.family, testnet: false, xpub, start: 0, count: 20 });
    await common.db.write((x) => addToPool(x, { chain, isTestnet: false }, 'demo', entries));
  }
  // Run again, the demo reuses its merchant (and the pools skip addresses they hold): one more
  // invoice, never one more "Demo Coffee Roasters".
  const merchant =
    (await listMerchants(common.db)).find((m) => m.name === DEMO_MERCHANT && m.active) ??
    (await createMerchant(common.db, common.box, { name: DEMO_MERCHANT, acceptedChains: Object.keys(keys) })).merchant;
  const invoice = await createInvoice(common.db, merchant.id, {
    orderId: `demo-${Date.now()}`,
    amount: '2500',
    currency: 'USD',
    description: 'Two bags of single-origin beans',
    customerEmail: 'jane@example.com',
    customerName: 'Jane Doe',
    customerMetadata: {},
    metadata: {},
    returnUrl: 'https://example.com/thanks',
    cancelUrl: 'https://example.com/cart',
    expiresInMinutes: 1440,
  });
  // No indexer runs in the demo: without this, no chain would be offered (docs/checkout.md#what-is-offered).
  // The page says, on every view, that these addresses come from a public test phrase.
  const configFile = resolve(dirname(sqlitePath(url)), 'demo.yaml');
  writeFileSync(
    configFile,
    [
      '# npm run demo: no indexer runs, so chains are offered without one; the addresses come from a public',
      '# test phrase, so the page shows a "demo — test phrase, never pay" banner. Never in production.',
      'checkout:',
      '  indexerStaleAfterSeconds: null',
      '  demoBanner: true',
      '',
    ].join('\n'),
  );
  const shown = (path: string) => (relative(process.cwd(), path).startsWith('..') ? path : relative(process.cwd(), path));
  const base = common.config.server.checkoutPageUrl ?? `http://${common.config.server.host}:${common.config.server.port}`;
  process.stdout.write(
    [
      `Demo invoice ${invoice.referenceId} (25.00 USD) for "Demo Coffee Roasters" in ${url}.`,
      'DEMO ONLY: its deposit addresses come from a public test phrase; never send real funds.',
      '',
      `  CHAINGATE_DATABASE_URL=${url} CHAINGATE_CONFIG=${shown(configFile)} npm start`,
      `  open ${base}/i/${invoice.id}`,
      '',
    ].join('\n'),
  );
} finally {
  await common.close();
}
