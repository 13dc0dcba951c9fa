import { Command } from 'commander';

// Each subcommand's module is loaded only when it is the one invoked (all of them for top-level
// help or an unknown name), so `chaingate merchant list` does not load the HTTP server, the chain
// libraries and the indexer.
const COMMANDS: Record<string, () => Promise<Command>> = {
  serve: async () => (await import('./commands/serve.ts')).serveCommand(),
  migrate: async () => (await import('./commands/migrate.ts')).migrateCommand(),
  merchant: async () => (await import('./commands/merchant.ts')).merchantCommand(),
  invoice: async () => (await import('./commands/invoice.ts')).invoiceCommand(),
  users: async () => (await import('./commands/users.ts')).usersCommand(),
  audit: async () => (await import('./commands/audit.ts')).auditCommand(),
  secrets: async () => (await import('./commands/secrets.ts')).secretsCommand(),
  wallets: async () => (await import('./commands/wallets.ts')).walletsCommand(),
  webhooks: async () => (await import('./commands/webhooks.ts')).webhooksCommand(),
  index: async () => (await import('./commands/index-chain.ts')).indexCommand(),
  transfers: async () => (await import('./commands/transfers.ts')).transfersCommand(),
  contracts: async () => (await import('./commands/contracts.ts')).contractsCommand(),
  status: async () => (await import('./commands/status.ts')).statusCommand(),
  config: async () => (await import('./commands/config.ts')).configCommand(),
  devnet: async () => (await import('./commands/devnet.ts')).devnetCommand(),
  sweep: async () => (await import('./commands/sweep.ts')).sweepCommand(),
  refund: async () => (await import('./commands/refund.ts')).refundCommand(),
  report: async () => (await import('./commands/report.ts')).reportCommand(),
};

export async function buildProgram(argv: string[]): Promise<Command> {
  const program = new Command('chaingate')
    .description('self-hosted multi-chain crypto payment gateway')
    .version('0.1.0')
    .showHelpAfterError('(run with --help for usage)');
  const args = argv.slice(2);
  const invoked = args.find((a) => !a.startsWith('-'));
  const versionOnly = !invoked && args.some((a) => a === '-V' || a === '--version');
  const names = versionOnly ? [] : invoked && COMMANDS[invoked] ? [invoked] : Object.keys(COMMANDS);
  for (const name of names) program.addCommand(await COMMANDS[name]!());
  return program;
}
