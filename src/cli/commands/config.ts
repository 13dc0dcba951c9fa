import { Command } from 'commander';
import { stringify } from 'yaml';
import { loadConfig, redactConfig } from '../../config/load-config.ts';
import { emit } from '../output.ts';

export function configCommand(): Command {
  const cmd = new Command('config').description('inspect configuration');
  cmd
    .command('check')
    .description('validate the effective config (defaults < CHAINGATE_CONFIG file < environment) and print it, secrets redacted')
    .option('--json', 'machine-readable output')
    .action((opts: { json?: boolean }) => {
      const { config, file } = loadConfig();
      const shown = redactConfig(config);
      emit(opts.json, { file, config: shown }, () => `# config OK${file ? ` (file: ${file})` : ' (defaults and environment only)'}\n${stringify(shown)}`);
    });
  return cmd;
}
