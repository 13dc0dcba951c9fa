import { Command } from 'commander';
import { UsageError } from '../../domain/errors.ts';
import { emit } from '../output.ts';

// `chaingate devnet` and `chaingate devnet pay`: docs/devnet.md. Loaded only when invoked (it needs
// the Hardhat node from the development install).

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d{1,5}$/.test(value) || port < 1 || port > 65_535) throw new UsageError('--port must be a port number from 1 to 65535');
  return port;
}

export function devnetCommand(): Command {
  const cmd = new Command('devnet')
    .description('a complete local shop to try chaingate: a Hardhat chain, serve, an indexer, a merchant, a fresh invoice (until Ctrl-C)')
    .option('--database-url <url>', 'use this database (e.g. postgres://…) instead of a throwaway SQLite file')
    .option('--port <n>', 'serve the shop on this port (default: any free port)', parsePort)
    .option('--json', 'print the connection details as one JSON object')
    .action(async (opts: { databaseUrl?: string; port?: number; json?: boolean }) => {
      const { startDevnet } = await import('../../devnet/devnet.ts');
      if (!opts.json) process.stdout.write('starting the devnet: Hardhat chain, contracts, serve, indexer…\n');
      // Ctrl-C while it starts: finish starting (or failing, which cleans up itself), then stop, so
      // its temporary folder never stays behind.
      let interrupted = false;
      let wake = () => {};
      const onSignal = () => {
        interrupted = true;
        wake();
      };
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      const devnet = await startDevnet({ databaseUrl: opts.databaseUrl, port: opts.port, print: (line) => process.stdout.write(`${opts.json ? JSON.stringify({ event: line }) : line}\n`) });
      const s = devnet.state;
      // --json: the connection details as one JSON object on one line (webhook events follow as lines of their own).
      if (interrupted) {
        await devnet.stop();
        return;
      }
      if (opts.json) process.stdout.write(`${JSON.stringify(s)}\n`);
      else process.stdout.write(`${
        [
          '',
          `chaingate devnet is running (a local chain; never send real funds). Ctrl-C stops it.`,
          '',
          `  open the payment page   ${s.checkoutUrl}   (pick a coin on the Ethereum devnet)`,
          `  then play the buyer     chaingate devnet pay ${s.invoiceId}     (or: npm run devnet -- pay ${s.invoiceId})`,
          '',
          `  baseUrl       ${s.baseUrl}`,
          `  apiKey        ${s.merchant.apiKey}`,
          `  apiSecret     ${s.merchant.apiSecret}`,
          `  rpcUrl        ${s.rpcUrl}   chainId ${s.chainId}`,
          `  buyer         ${s.buyer.address}   key ${s.buyer.privateKey}`,
          `  USDT / USDC   ${s.tokens.USDT} / ${s.tokens.USDC}`,
          `  database      ${s.databaseUrl}   logs in ${s.dir}`,
          `  inspect it    ${Object.entries(s.env).map(([k, v]) => `${k}=${v}`).join(' ')} ./bin/chaingate status`,
          `  webhooks      verified and printed below as they arrive`,
          '',
          `  money out     chaingate sweep plan --chain ethereum --testnet --to ADDRESS --fee-payer ${s.signer.feePayer} --out plan.json   (docs/devnet.md#money-out)`,
          `  signer seed   ${s.signer.seedFile}   (mode 0600, for sweep sign --seed-file)`,
          `  fee payer     ${s.signer.feePayer}   (100 ETH, the seed's m/44'/60'/0'/1/0)`,
          `  !! ${s.signer.warning}`,
          '',
        ].join('\n')
      }\n`);
      await new Promise<void>((resolve) => {
        wake = resolve;
        if (interrupted) resolve();
      });
      await devnet.stop();
    });
  cmd
    .command('env')
    .description("print shell lines that point this shell at the running devnet: eval \"$(chaingate devnet env)\" (its database, config, signer seed file and fee payer)")
    .option('--json', 'machine-readable output')
    .action(async (opts: { json?: boolean }) => {
      const { readState } = await import('../../devnet/devnet.ts');
      const s = readState();
      const vars = { ...s.env, DEVNET_SEED_FILE: s.signer.seedFile, DEVNET_FEE_PAYER: s.signer.feePayer, DEVNET_BUYER: s.buyer.address, DEVNET_INVOICE: s.invoiceId };
      // Single-quoted for the shell: the values are paths, URLs and hex.
      emit(opts.json || Boolean(cmd.opts<{ json?: boolean }>().json), vars, () =>
        [`# ${s.signer.warning}`, ...Object.entries(vars).map(([k, v]) => `export ${k}='${v.replaceAll("'", "'\\''")}'`)].join('\n'),
      );
    });
  cmd
    .command('pay')
    .description('play the buyer: pay an invoice (checking it out if needed) or a payment from the funded devnet account')
    .argument('<id>', 'an invoice id or a payment id')
    .option('--amount <decimal>', 'send this amount instead of the payment amount (e.g. 10 to underpay)')
    .option('--token <symbol>', 'the coin when the invoice is not checked out yet: USDT (default), USDC or ETH; refused if it differs from an existing payment\'s coin')
    .option('--json', 'machine-readable output')
    .action(async (id: string, opts: { amount?: string; token?: string; json?: boolean }) => {
      if (opts.amount !== undefined && !/^\d+(\.\d+)?$/.test(opts.amount)) throw new UsageError('--amount must be a decimal such as 25 or 10.5');
      if (opts.token && !['USDT', 'USDC', 'ETH'].includes(opts.token.toUpperCase())) throw new UsageError('--token must be USDT, USDC or ETH');
      const { pay, readState } = await import('../../devnet/devnet.ts');
      const sent = await pay(readState(), id, { amount: opts.amount, token: opts.token?.toUpperCase() });
      // `devnet pay ID --json`: commander may give --json to the parent command; either asks for JSON.
      emit(opts.json || Boolean(cmd.opts<{ json?: boolean }>().json), sent, () => `sent ${sent.amount} ${sent.coin} to ${sent.to} for payment ${sent.paymentId} (tx ${sent.txHash}); watch the page follow the confirmations`);
    });
  return cmd;
}
