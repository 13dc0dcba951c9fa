import { Command } from 'commander';
import { stringify } from 'yaml';
import { loadConfig, redactConfig } from '../../config/load-config.ts';
import { emit } from '../output.ts';
import { resolveChains } from '../../families/families.ts';

export function configCommand(): Command {
  const cmd = new Command('config').description('inspect configuration');
  cmd
    .command('check')
    .description('validate the effective config (defaults < CHAINGATE_CONFIG file < environment), chains as serve resolves them, and print it, secrets redacted')
    .option('--json', 'machine-readable output')
    .action((opts: { json?: boolean }) => {
      const { config, file } = loadConfig();
      // The chains as serve will resolve them: addresses, token overrides and per-family keys.
      resolveChains(config.chains);
      const shown = redactConfig(config);
      emit(opts.json, { file, config: shown }, () => `# config OK${file ? ` (file: ${file})` : ' (defaults and environment only)'}\n${stringify(shown)}`);
    });
  return cmd;
}
