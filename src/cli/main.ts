import { type Command, CommanderError } from 'commander';
import { ConfigError, endpointUrls, loadConfig } from '../config/load-config.ts';
import { createUrlScrubber } from '../domain/http-url.ts';
import { GatewayError, UsageError } from '../domain/errors.ts';
import { SecretBoxError } from '../domain/secret-box.ts';
import { buildProgram } from './program.ts';

// Exit codes: 0 success, 1 runtime failure, 2 bad input or bad configuration.
function applyToSubcommands(cmd: Command): void {
  cmd.exitOverride();
  for (const sub of cmd.commands) applyToSubcommands(sub as Command);
}

export async function main(argv: string[]): Promise<number> {
  const program = await buildProgram(argv);
  applyToSubcommands(program);
  try {
    await program.parseAsync(argv);
    return 0;
  } catch (err) {
    return report(err);
  }
}

/**
 * The error's one line on stderr and the exit code. The line may quote an endpoint (a chain
 * node's error, a refused URL): any URL with user info, or at a configured endpoint, keeps only
 * scheme://host[:port], as in the logs.
 */
function report(err: unknown): number {
  const scrub = createUrlScrubber(configuredEndpoints());
  const stderr = { write: (text: string) => process.stderr.write(scrub(text)) };
  if (err instanceof CommanderError) {
    return err.exitCode === 0 || err.code === 'commander.helpDisplayed' || err.code === 'commander.version' ? 0 : 2;
  }
  if (err instanceof UsageError || err instanceof ConfigError) {
    stderr.write(`chaingate: ${err.message}\n`);
    return 2;
  }
  if (err instanceof GatewayError) {
    stderr.write(`chaingate: ${err.code}: ${err.message}\n`);
    return err.status < 500 ? 2 : 1;
  }
  if (err instanceof SecretBoxError) {
    stderr.write(`chaingate: ${err.message}\n`);
    return 1;
  }
  stderr.write(`chaingate: ${err instanceof Error ? err.message : String(err)}\n`);
  if (process.env.CHAINGATE_DEBUG) console.error(err);
  return 1;
}

function configuredEndpoints(): string[] {
  try {
    return endpointUrls(loadConfig().config);
  } catch {
    return [];
  }
}

const code = await main(process.argv);
process.exitCode = code;
