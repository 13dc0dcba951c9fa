import { Command } from 'commander';
import { configCommand } from './commands/config.ts';
import { merchantCommand } from './commands/merchant.ts';
import { migrateCommand } from './commands/migrate.ts';
import { secretsCommand } from './commands/secrets.ts';
import { serveCommand } from './commands/serve.ts';
import { walletsCommand } from './commands/wallets.ts';
import { webhooksCommand } from './commands/webhooks.ts';
import { indexCommand } from './commands/index-chain.ts';
import { transfersCommand } from './commands/transfers.ts';
import { contractsCommand } from './commands/contracts.ts';
import { statusCommand } from './commands/status.ts';

export function buildProgram(): Command {
  const program = new Command('chaingate')
    .description('self-hosted multi-chain crypto payment gateway')
    .version('0.1.0')
    .showHelpAfterError('(run with --help for usage)');
  program.addCommand(serveCommand());
  program.addCommand(migrateCommand());
  program.addCommand(merchantCommand());
  program.addCommand(secretsCommand());
  program.addCommand(walletsCommand());
  program.addCommand(webhooksCommand());
  program.addCommand(indexCommand());
  program.addCommand(transfersCommand());
  program.addCommand(contractsCommand());
  program.addCommand(statusCommand());
  program.addCommand(configCommand());
  return program;
}
