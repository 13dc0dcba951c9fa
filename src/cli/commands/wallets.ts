import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { deriveAddresses } from '../../families/derive.ts';

import { getNetwork} from '../../chains/registry.ts';
import { CHAIN_SLUGS, isChainSlug } from '../../chains/slugs.ts';
import { InvalidAddressError } from '../../domain/errors.ts';
import type { AddressScript } from '../../families/family.ts';
import { addressScripts, secretKeyForms, seededFromFile, validateAddress, resolveChains } from '../../families/families.ts';
import { UsageError } from '../../domain/errors.ts';
import { addToPool, analyzePool, countFree, countPools, listPoolAddresses, nextDerivationIndex, type SeedEntry } from '../../store/wallet-pool.ts';
import { receivePath } from '../../families/derivation-path.ts';
import { withCommon } from '../context.ts';
import { parseLimit } from '../options.ts';
import { emit, table } from '../output.ts';
import { assertPublicKeyMaterial, keyFingerprint } from '../../families/key-material.ts';

function parseChain(value: string): string {
  if (!isChainSlug(value)) throw new UsageError(`unknown chain slug ${JSON.stringify(value)} (known: ${CHAIN_SLUGS.join(', ')})`);
  return value;
}

const SCRIPTS: readonly AddressScript[] = addressScripts();

function parseScript(value: string): AddressScript {
  const script = SCRIPTS.find((s) => s === value);
  if (!script) throw new UsageError(`--script must be one of ${SCRIPTS.join(', ')} (bitcoin: BIP84 native segwit or BIP86 taproot)`);
  return script;
}

function parseCount(name: string) {
  return (value: string): number => {
    if (!/^\d{1,9}$/.test(value)) throw new UsageError(`${name} must be a non-negative integer`);
    return Number(value);
  };
}

/** One address per line; blank lines and # comments ignored. Every line is validated before anything is stored. */
function readAddressFile(path: string, family: Parameters<typeof validateAddress>[0], testnet: boolean, network: string): SeedEntry[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  const entries: SeedEntry[] = [];
  const bad: string[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    const value = line.replace(/#.*/, '').trim();
    if (!value) return;
    try {
      assertPublicKeyMaterial(value, secretKeyForms());
      entries.push({ address: validateAddress(family, value, testnet, { network }), index: null });
    } catch (err) {
      if (err instanceof InvalidAddressError || err instanceof UsageError) bad.push(`line ${i + 1}: ${err.message}`);
      else throw err;
    }
  });
  if (bad.length) {
    throw new UsageError(`${path} has ${bad.length} invalid line(s), nothing was added:\n  ${bad.slice(0, 20).join('\n  ')}${bad.length > 20 ? '\n  …' : ''}`);
  }
  if (entries.length === 0) throw new UsageError(`${path} holds no addresses`);
  return entries;
}

export function walletsCommand(): Command {
  const cmd = new Command('wallets').description('watch-only deposit address pools (the server never holds a private key)');

  cmd
    .command('seed')
    .description(`add deposit addresses to a pool: derived from an account xpub, or read from a file (${seededFromFile().join(', ')})`)
    .requiredOption('--chain <slug>', 'chain slug', parseChain)
    .option('--testnet', "seed the chain's testnet pool")
    .option('--xpub <key>', 'account-level extended public key (xpub/zpub/tpub/vpub); children 0/i are derived')
    .option('--script <type>', 'bitcoin output type to derive: p2wpkh (BIP84, default) or p2tr (BIP86 taproot, from an xpub/tpub)', parseScript)
    .option('--count <n>', 'how many addresses to derive', parseCount('--count'))
    .option('--start <i>', 'first child index (default: continue after the last one seeded)', parseCount('--start'))
    .option('--file <path>', 'a file with one address per line')
    .option('--json', 'machine-readable output')
    .action(async (opts: { chain: string; testnet?: boolean; xpub?: string; script?: AddressScript; count?: number; start?: number; file?: string; json?: boolean }) => {
      if (Boolean(opts.xpub) === Boolean(opts.file)) throw new UsageError('give either --xpub KEY --count N or --file PATH');
      if (opts.xpub && opts.count === undefined) throw new UsageError('--xpub needs --count N');
      if (opts.file && (opts.count !== undefined || opts.start !== undefined)) throw new UsageError('--count and --start go with --xpub, not --file');
      if (opts.file && opts.script) throw new UsageError('--script goes with --xpub; a --file may list addresses of any type');
      await withCommon(async (common) => {
        const network = getNetwork(resolveChains(common.config.chains), opts.chain, Boolean(opts.testnet));
        const pool = { chain: network.chain, isTestnet: network.testnet };
        let entries: SeedEntry[];
        let source: string;
        let start: number | null = null;
        if (opts.xpub) {
          assertPublicKeyMaterial(opts.xpub, secretKeyForms());
          source = keyFingerprint(opts.xpub, opts.script);
          start = opts.start ?? (await nextDerivationIndex(common.db, pool, source));
          entries = deriveAddresses({ family: network.family, testnet: network.testnet, network: network.network, xpub: opts.xpub, script: opts.script, start, count: opts.count! });
        } else {
          source = 'file';
          entries = readAddressFile(opts.file!, network.family, network.testnet, network.network);
        }
        // Duplicates inside the input count as skipped too.
        const unique = [...new Map(entries.map((e) => [e.address, e])).values()];
        const result = await common.db.write((x) => addToPool(x, pool, source, unique));
        if (result.added > 0) await analyzePool(common.db);
        const skipped = result.skipped + (entries.length - unique.length);
        const free = await countFree(common.db, pool);
        // The first and last address of the batch with their paths, to compare with the wallet before
        // the pool is published (docs/wallets.md).
        const xpub = opts.xpub;
        const ends = [entries[0]!, entries.at(-1)!].map((e) => ({
          index: e.index,
          path: xpub && e.index !== null ? receivePath({ xpub, family: network.family, testnet: network.testnet, index: e.index, address: e.address }) : null,
          address: e.address,
        }));
        const [first, last] = ends as [(typeof ends)[0], (typeof ends)[0]];
        const out = { chain: network.chain, network: network.network, isTestnet: network.testnet, source, start, added: result.added, skipped, free, first, last };
        common.log.info({ chain: out.chain, network: out.network, added: out.added, skipped, free }, 'seeded wallet pool');
        emit(opts.json, out, () =>
          [
            `${out.chain} ${out.network}: added ${out.added}, skipped ${skipped} already present, ${free} free now`,
            table([{ '': 'first', ...first }, { '': 'last', ...last }], ['', ...(first.path ? ['path'] : []), 'address']),
          ].join('\n'),
        );
      });
    });

  cmd
    .command('list')
    .description('free / leased / total addresses per chain and network; with --addresses, the addresses of one pool')
    .option('--chain <slug>', 'only this chain', parseChain)
    .option('--addresses', "list the pool's addresses with index, path and status (needs --chain)")
    .option('--testnet', "with --addresses: the chain's testnet pool")
    .option('--from <n>', 'with --addresses: skip the first n addresses', parseCount('--from'), 0)
    .option('--limit <n>', 'with --addresses: at most this many addresses', parseLimit, 20)
    .option('--json', 'machine-readable output')
    .action(async (opts: { chain?: string; addresses?: boolean; testnet?: boolean; from: number; limit: number; json?: boolean }, command: Command) => {
      const given = (name: string) => command.getOptionValueSource(name) === 'cli';
      if (!opts.addresses && (opts.testnet || given('from') || given('limit'))) throw new UsageError('--testnet, --from and --limit go with --addresses');
      if (opts.addresses && !opts.chain) throw new UsageError('--addresses needs --chain SLUG (one pool at a time)');
      await withCommon(async (common) => {
        const registry = resolveChains(common.config.chains);
        if (opts.addresses) {
          const network = getNetwork(registry, opts.chain!, Boolean(opts.testnet));
          const page = await listPoolAddresses(common.db, { chain: network.chain, isTestnet: network.testnet }, { offset: opts.from, limit: opts.limit });
          const rows = page.addresses.map((a) => ({
            chain: network.chain,
            network: network.network,
            index: a.index,
            // The account key is not stored, only its fingerprint: the path below it.
            path: a.index === null ? null : `key/0/${a.index}`,
            address: a.address,
            status: a.status,
            paymentId: a.paymentId,
            leasedAt: a.leasedAt?.toISOString() ?? null,
            key: a.source,
          }));
          const shown = rows.length ? `addresses ${opts.from + 1}–${opts.from + rows.length} of ${page.total}` : `no addresses from ${opts.from + 1} on (the pool holds ${page.total})`;
          const more = opts.from + rows.length < page.total ? `; more with --from ${opts.from + rows.length}` : '';
          emit(opts.json, rows, () => `${network.chain} ${network.network}: ${shown}${more}\n${table(rows, ['index', 'path', 'address', 'status', 'paymentId', 'key'])}`);
          return;
        }
        const rows = (await countPools(common.db, opts.chain)).map((r) => ({
          ...r,
          network: getNetwork(registry, r.chain, r.isTestnet).network,
        }));
        emit(opts.json, rows, () => table(rows, ['chain', 'network', 'free', 'leased', 'total']));
      }, { readOnly: true });
    });
  return cmd;
}
