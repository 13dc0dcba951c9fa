import { Command } from 'commander';
import type { SweepPlan } from '../../families/sweep.ts';
import { parseLimit } from '../options.ts';
import { emit, table } from '../output.ts';

// `chaingate sweep plan|sign|broadcast|list|show` (docs/sweeps.md). Each action loads its use case
// when it runs: `sweep sign` runs on an offline machine and must load no database, configuration or
// chain client, so nothing here imports them at the top.

const collect = (value: string, previous: string[]) => [...previous, value];

export function sweepCommand(): Command {
  const cmd = new Command('sweep').description("move deposits' funds to cold storage: plan on the server, sign offline, broadcast on the server");

  cmd
    .command('plan')
    .description('reads the deposits whose payments ended and their live balances; writes unsigned transactions and a summary')
    .requiredOption('--chain <slug>', 'chain slug')
    .option('--testnet', "the chain's testnet")
    .requiredOption('--to <address>', 'the cold address every deposit is emptied to')
    .option('--fee-payer <address>', 'an account of the same wallet that pays the fees (chains where deposits hold no gas)')
    .option('--min <amount>', 'leave deposits holding less than this (native coin, or SYMBOL=amount); repeatable', collect, [])
    .option('--xpub <key>', 'bitcoin: an account key the pool was seeded from, so the PSBT carries BIP32 derivations for other signers; repeatable (BIP84 and BIP86)', collect, [])
    .option('--fingerprint <hex>', 'bitcoin: the master key fingerprint (8 hex digits) for those derivations')
    .requiredOption('--out <path>', 'where to write plan.json')
    .option('--json', 'machine-readable output')
    .action(async (opts: { chain: string; testnet?: boolean; to: string; feePayer?: string; min: string[]; xpub: string[]; fingerprint?: string; out: string; json?: boolean }) => {
      const { withCommon } = await import('../context.ts');
      const { planSweep } = await import('../../sweep/plan-sweep.ts');
      const { describePlan, totalsJson } = await import('../../sweep/summary.ts');
      const { CHAIN_DEFAULTS } = await import('../../chains/chain-defaults.ts');
      const { UsageError } = await import('../../domain/errors.ts');
      if ((opts.xpub.length > 0 || opts.fingerprint !== undefined) && opts.chain !== 'bitcoin') throw new UsageError('--xpub and --fingerprint are for bitcoin PSBTs only');
      if (opts.fingerprint !== undefined && opts.xpub.length === 0) throw new UsageError('--fingerprint goes with --xpub (the derivations need the account key)');
      await withCommon(async (common) => {
        const result = await planSweep(common, {
          chain: opts.chain,
          testnet: Boolean(opts.testnet),
          to: opts.to,
          feePayer: opts.feePayer ?? null,
          min: opts.min,
          accountKeys: opts.xpub,
          masterFingerprint: opts.fingerprint ?? null,
          out: opts.out,
        });
        const native = CHAIN_DEFAULTS[result.plan.chain].native;
        emit(opts.json, { written: result.written, file: result.written ? opts.out : null, reason: result.written ? null : result.reason, totals: totalsJson(result.plan), plan: result.plan }, () =>
          result.written
            ? `${describePlan(result.plan, native.decimals, native.symbol)}\nwrote ${opts.out}: sign it offline with \`chaingate sweep sign --plan ${opts.out} --out signed.json --seed-file <path> --expect-to ${result.plan.to}\``
            : `${describePlan(result.plan, native.decimals, native.symbol)}\nnothing to sweep: ${result.reason}; no file written`,
        );
      });
    });

  cmd
    .command('sign')
    .description('OFFLINE: derives each deposit key from the wallet secret, checks it against the plan, signs; no database, no network')
    .requiredOption('--plan <path>', 'plan.json from `sweep plan`')
    .requiredOption('--out <path>', 'where to write signed.json (mode 0600)')
    .option('--seed-file <path>', 'a file (mode 0600) holding the BIP39 phrase, a 128-hex seed or an account xprv')
    .option('--seed-stdin', 'read the secret from stdin instead')
    .option('--expect-to <address|file>', 'refuse unless the plan sends everything to this address, or to one of the addresses listed in this file')
    .option('--max-fee <amount>', 'allow fees up to this much of the native coin for the whole plan, instead of the default bounds (docs/sweeps.md#fee-bounds)')
    .option('--yes', 'sign without asking (needs --expect-to)')
    .option('--json', 'machine-readable output')
    .action(async (opts: { plan: string; out: string; seedFile?: string; seedStdin?: boolean; expectTo?: string; maxFee?: string; yes?: boolean; json?: boolean }) => {
      const { signSweep } = await import('../../sweep/sign-sweep.ts');
      const { askOnTerminal } = await import('../terminal-question.ts');
      const result = await signSweep(opts, { say: (text) => process.stderr.write(`${text}\n`), confirm: opts.seedStdin || !process.stdin.isTTY ? null : askOnTerminal });
      emit(opts.json, { file: opts.out, planId: result.plan.id, chain: result.plan.chain, network: result.plan.network, to: result.plan.to, totals: result.totals, transactions: result.signed.transactions.map((t) => ({ id: t.id, txid: t.txid })) }, () =>
        [`signed ${result.signed.transactions.length} transaction${result.signed.transactions.length === 1 ? '' : 's'}: ${result.signed.transactions.map((t) => `${t.id} ${t.txid}`).join(', ')}`, `wrote ${opts.out}: take it to the server and run \`chaingate ${result.plan.kind} broadcast --signed ${opts.out}\``].join('\n'),
      );
    });

  cmd.addCommand(broadcastCommand('sweep'));
  cmd.addCommand(cancelCommand('sweep'));

  cmd
    .command('list')
    .description('sweep plans, newest first, with their transactions')
    .option('--chain <slug>', 'only this chain')
    .option('--limit <n>', 'at most this many plans', parseLimit, 50)
    .option('--json', 'machine-readable output')
    .action(async (opts: { chain?: string; limit: number; json?: boolean }) => {
      const { withCommon } = await import('../context.ts');
      const { listSweeps } = await import('../../store/sweeps.ts');
      const { poolReader } = await import('../../store/raw-sql.ts');
      const { coinUnitsFor } = await import('../coin-units.ts');
      await withCommon(
        async (common) => {
          const plans = await listSweeps(poolReader(common.db), { chain: opts.chain, limit: opts.limit });
          const unitsOf = coinUnitsFor(common.config);
          // `moves` and `fee` stay atomic (as the plan and `sweep broadcast --json` hold them) and `units`
          // says so; `amounts` and the table say them in coins with the symbol.
          const out = plans.map((p) => {
            const units = unitsOf(p.chain, p.network);
            const moved: Record<string, bigint> = {};
            let fees = 0n;
            for (const t of p.txs) {
              for (const [symbol, amount] of Object.entries(t.moves)) moved[symbol] = (moved[symbol] ?? 0n) + BigInt(amount);
              fees += BigInt(t.fee);
            }
            return {
              ...p,
              units: { moves: 'atomic', fee: 'atomic' },
              txs: p.txs.map((t) => ({ ...t, amounts: { moves: Object.entries(t.moves).map(([symbol, a]) => units.coins(symbol, a)), fee: units.native(t.fee) } })),
              amounts: { moved: Object.entries(moved).map(([symbol, a]) => units.coins(symbol, a)), fees: units.native(fees) },
            };
          });
          emit(opts.json, out, () =>
            table(
              out.map((p) => ({
                plan: p.planId.slice(0, 16),
                chain: p.chain,
                network: p.network,
                created: p.createdAt.toISOString(),
                to: p.to,
                txs: p.txs.length,
                moved: p.txs.length === 0 ? null : p.amounts.moved.join(', ') || 'nothing',
                fees: p.txs.length === 0 ? null : p.amounts.fees,
                status: p.txs.length === 0 ? 'NOT BROADCAST' : [...new Set(p.txs.map((t) => t.status))].join('/'),
              })),
              ['plan', 'chain', 'network', 'created', 'to', 'txs', 'moved', 'fees', 'status'],
            ),
          );
        },
        { readOnly: true },
      );
    });

  cmd
    .command('show')
    .argument('<ref>', 'a plan id (or its first 8+ hex digits) or a transaction id')
    .description("one plan: its deposits, what moved and each transaction's state")
    .option('--json', 'machine-readable output')
    .action(async (ref: string, opts: { json?: boolean }) => {
      const { withCommon } = await import('../context.ts');
      const { findSweep } = await import('../../store/sweeps.ts');
      const { poolReader } = await import('../../store/raw-sql.ts');
      const { UsageError } = await import('../../domain/errors.ts');
      const { describePlan } = await import('../../sweep/summary.ts');
      const { CHAIN_DEFAULTS } = await import('../../chains/chain-defaults.ts');
      const { coinUnitsOf } = await import('../coin-units.ts');
      await withCommon(
        async (common) => {
          const found = await findSweep(poolReader(common.db), ref.trim());
          if (!found) throw new UsageError(`no sweep plan or transaction ${JSON.stringify(ref)}`);
          const plan = JSON.parse(found.plan.body) as SweepPlan;
          const native = CHAIN_DEFAULTS[plan.chain].native;
          const units = coinUnitsOf(common.config, plan.chain, plan.network);
          // The plan as its file holds it (atomic units) and each transaction's `moves` and `fee`, atomic,
          // as `units` says; `amounts` in coins with the symbol.
          const transactions = found.txs.map((t) => ({ ...t, amounts: { moves: Object.entries(t.moves).map(([symbol, a]) => units.coins(symbol, a)), fee: units.native(t.fee) } }));
          emit(opts.json, { units: { plan: 'atomic', moves: 'atomic', fee: 'atomic' }, plan, transactions }, () =>
            [describePlan(plan, native.decimals, native.symbol), table(transactions.map((t) => ({ id: t.txKey, txid: t.txid, status: t.status, attempts: t.attempts, moved: t.amounts.moves.join(', ') || 'nothing', fee: t.amounts.fee, error: t.error })), ['id', 'txid', 'status', 'attempts', 'moved', 'fee', 'error'])].join('\n'),
          );
        },
        { readOnly: true },
      );
    });
  return cmd;
}

/** `sweep cancel` and `refund cancel`: a plan never broadcast gives back what it reserved. */
export function cancelCommand(kind: 'sweep' | 'refund'): Command {
  return new Command('cancel')
    .argument('<ref>', kind === 'sweep' ? 'the plan id (or its first 8+ hex digits)' : 'the refund id, or its plan id (or the first 8+ hex digits)')
    .description(`cancels a ${kind} plan that was never broadcast: its deposits${kind === 'refund' ? ' and the amount it reserved of its payment' : ''} are free again`)
    .option('--json', 'machine-readable output')
    .action(async (ref: string, opts: { json?: boolean }) => {
      const { withCommon } = await import('../context.ts');
      const { cancelSweepPlan } = await import('../../sweep/cancel-plan.ts');
      await withCommon(async (common) => {
        const result = await cancelSweepPlan(common, kind, ref.trim());
        emit(opts.json, { cancelled: true, planId: result.planId }, () => `cancelled ${kind} plan ${result.planId.slice(0, 16)}…: its signed file, if any, will be refused`);
      });
    });
}

/** `sweep broadcast` and `refund broadcast`: the same resumable broadcast, each for its own kind of plan. */
export function broadcastCommand(kind: 'sweep' | 'refund'): Command {
  return new Command('broadcast')
    .description('records, sends and follows each signed transaction to finality; safe to run again')
    .requiredOption('--signed <path>', `signed.json from \`sweep sign\` of a ${kind} plan`)
    .option('--plan <path>', 'the plan file too, checked against the signed one')
    .option('--wait', 'follow the transactions until they are final')
    .option('--json', 'machine-readable output')
    .action(async (opts: { signed: string; plan?: string; wait?: boolean; json?: boolean }) => {
      const { withCommon } = await import('../context.ts');
      const { broadcastSweep } = await import('../../sweep/broadcast-sweep.ts');
      const { coinUnitsOf } = await import('../coin-units.ts');
      await withCommon(async (common) => {
        const result = await broadcastSweep(common, { kind, signed: opts.signed, plan: opts.plan, wait: Boolean(opts.wait) }, opts.json ? undefined : (line) => process.stderr.write(`${line}\n`));
        const failed = result.transactions.filter((t) => t.status === 'FAILED');
        // `moves` and `fee` are atomic units (as the plan holds them); `amounts` says them in coins.
        const units = coinUnitsOf(common.config, result.chain, result.network);
        const shown = result.transactions.map((t) => ({ ...t, amounts: { moves: Object.entries(t.moves).map(([s, a]) => units.coins(s, a)), fee: units.native(t.fee) } }));
        emit(opts.json, { ...result, units: { moves: 'atomic', fee: 'atomic' }, transactions: shown }, () =>
          [
            table(shown.map((t) => ({ ...t, moves: t.amounts.moves.join(', '), fee: t.amounts.fee })), ['id', 'txid', 'status', 'deposits', 'moves', 'fee', 'error']),
            result.done ? 'every transaction is final' : failed.length > 0 ? `${failed.length} failed (see error); fix the cause and run the same command again` : 'not final yet: run the same command again (or with --wait) to follow it',
          ].join('\n'),
        );
        // Exit 1 so a script sees it: what failed is recorded and shown; the same command resumes.
        if (failed.length > 0) throw new Error(`${failed.length} ${kind} transaction${failed.length === 1 ? '' : 's'} failed: ${failed.map((f) => `${f.id}: ${f.error}`).join('; ')}`);
      });
    });
}
