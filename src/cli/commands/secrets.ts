import { Command } from 'commander';
import { rotatePointSecret } from '../../app/merchant-points.ts';
import { withCommon } from '../context.ts';
import { emit } from '../output.ts';

export function secretsCommand(): Command {
  const cmd = new Command('secrets').description('manage merchant API secrets');
  cmd
    .command('rotate')
    .description('issue a new apiSecret; the old one stops working at once (no overlap window)')
    .argument('<merchantId>', 'merchant point id')
    .option('--json', 'machine-readable output')
    .action(async (merchantId: string, opts: { json?: boolean }) => {
      await withCommon(async (common) => {
        const { merchant, apiSecret } = await rotatePointSecret(common, merchantId, null);
        const out = { id: merchant.id, apiKey: merchant.apiKey, apiSecret };
        emit(opts.json, out, () => `new apiSecret for ${merchant.id}: ${apiSecret}\nThe previous secret no longer signs requests or webhooks.`);
      });
    });
  return cmd;
}
