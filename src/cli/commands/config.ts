import { Command } from 'commander';
import { stringify } from 'yaml';
import { loadConfig, redactConfig } from '../../config/load-config.ts';
import { endpointChoice } from '../../chains/public-endpoint.ts';
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
      const registry = resolveChains(config.chains);
      // Nothing silent: each enabled mainnet without an endpoint of its own, and what its indexer would do.
      const production = process.env.NODE_ENV === 'production';
      const publicEndpoints = Object.values(registry.chains)
        .map((c) => c.mainnet)
        .filter((n) => n.enabled)
        .map((n) => ({ n, choice: endpointChoice(config.chains, n, { allowPublicEndpoints: config.indexer.allowPublicEndpoints, production }) }))
        .filter(({ choice }) => !choice.configured)
        .map(({ n, choice }) => ({ setting: `chains.${n.chain}.mainnet.rpcUrl`, publicEndpoint: n.rpcUrl, index: choice.problem ? 'refuses to start' : 'uses the public endpoint' }));
      const shown = redactConfig(config);
      emit(opts.json, { file, config: shown, publicEndpoints }, () =>
        [
          `# config OK${file ? ` (file: ${file})` : ' (defaults and environment only)'}`,
          ...publicEndpoints.map((p) => `# ${p.setting} is not set: \`index\` ${p.index} (${p.publicEndpoint})`),
          stringify(shown),
        ].join('\n'),
      );
    });
  return cmd;
}
