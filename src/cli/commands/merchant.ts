import { Command, Option } from 'commander';
import { EVENT_TYPES } from '../../store/events.ts';
import { getMerchantOrThrow, listMerchants, merchantView, type MerchantChanges } from '../../store/merchants.ts';
import { checkChains, checkCurrencies, checkName, createPoint, updatePoint } from '../../app/merchant-points.ts';
import { UsageError } from '../../domain/errors.ts';
import { parseWebhookUrl } from '../../domain/webhook-url.ts';
import { withCommon } from '../context.ts';
import { emit, keyValues, table } from '../output.ts';

/** The shared check's words, under the flag's name. */
function asFlag<T>(flag: string, check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (err instanceof UsageError) throw new UsageError(`${flag} ${err.message.replace(/^the name /, '')}`);
    throw err;
  }
}

function parseName(value: string): string {
  return asFlag('--name', () => checkName(value));
}

function parseChains(value: string): string[] {
  return asFlag('--chains', () => checkChains(value.split(',')));
}

/** --currencies ethereum:USDT+USDC,tron:USDT */
function parseCurrencies(value: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const part of value.split(',').map((s) => s.trim()).filter(Boolean)) {
    const [chain, symbols] = part.split(':');
    if (!chain || !symbols) throw new UsageError(`--currencies entry ${JSON.stringify(part)} must look like chain:SYM+SYM`);
    out[chain] = symbols.split('+');
  }
  return asFlag('--currencies', () => checkCurrencies(out));
}

/** --events payment.completed,invoice.paid (webhook event types this point receives) */
function parseEvents(value: string): string[] {
  const events = [...new Set(value.split(',').map((s) => s.trim()).filter(Boolean))];
  if (events.length === 0) throw new UsageError('--events needs at least one event type');
  const unknown = events.filter((e) => !(EVENT_TYPES as readonly string[]).includes(e));
  if (unknown.length) throw new UsageError(`unknown event type(s): ${unknown.join(', ')} (known: ${EVENT_TYPES.join(', ')})`);
  return events;
}

export function merchantCommand(): Command {
  const cmd = new Command('merchant').description('manage merchant points (API keys, webhook URL, accepted chains)');

  cmd
    .command('create')
    .description('create a merchant point; prints its apiKey and apiSecret (the secret is shown only once)')
    .requiredOption('--name <name>', 'company name shown to buyers', parseName)
    .option('--webhook-url <url>', 'where signed webhook events are POSTed', parseWebhookUrl)
    .option('--chains <slugs>', 'comma-separated chain slugs accepted (default: all)', parseChains)
    .option('--currencies <list>', 'restrict coins per chain, e.g. ethereum:USDT+USDC,tron:USDT', parseCurrencies)
    .option('--events <types>', 'webhook event types sent, comma-separated (default: all)', parseEvents)
    .option('--json', 'machine-readable output')
    .action(async (opts: { name: string; webhookUrl?: string; chains?: string[]; currencies?: Record<string, string[]>; events?: string[]; json?: boolean }) => {
      await withCommon(async (common) => {
        const { merchant, apiSecret } = await createPoint(common, {
          name: opts.name,
          webhookUrl: opts.webhookUrl ?? null,
          acceptedChains: opts.chains ?? null,
          acceptedCurrencies: opts.currencies ?? null,
          webhookEvents: opts.events ?? null,
        }, null);
        const view = merchantView(merchant);
        const out = { id: view.id, name: view.name, apiKey: view.apiKey, apiSecret, webhookUrl: view.webhookUrl, webhookEvents: view.webhookEvents, active: view.active, acceptedChains: view.acceptedChains };
        emit(opts.json, out, () => `${keyValues(out)}\n\nStore the apiSecret now: it is shown only this once.`);
      });
    });

  cmd
    .command('list')
    .description('list merchant points')
    .option('--json', 'machine-readable output')
    .action(async (opts: { json?: boolean }) => {
      await withCommon(async (common) => {
        const views = (await listMerchants(common.db)).map(merchantView);
        emit(opts.json, views, () => table(views.map((v) => ({ ...v, apiKey: `${v.apiKey.slice(0, 8)}…` })), ['id', 'name', 'active', 'apiKey', 'webhookUrl']));
      }, { readOnly: true });
    });

  cmd
    .command('show')
    .description('show one merchant point')
    .argument('<id>', 'merchant point id')
    .option('--json', 'machine-readable output')
    .action(async (id: string, opts: { json?: boolean }) => {
      await withCommon(async (common) => {
        const view = merchantView(await getMerchantOrThrow(common.db, id));
        emit(opts.json, view, () => keyValues({ ...view }));
      }, { readOnly: true });
    });

  cmd
    .command('update')
    .description('change name, webhook URL or accepted chains/currencies')
    .argument('<id>', 'merchant point id')
    .option('--name <name>', 'new name', parseName)
    .option('--webhook-url <url>', 'new webhook URL', parseWebhookUrl)
    .option('--no-webhook', 'remove the webhook URL')
    .option('--chains <slugs>', 'comma-separated chain slugs accepted', parseChains)
    .option('--all-chains', 'accept every enabled chain again')
    .option('--currencies <list>', 'restrict coins per chain, e.g. ethereum:USDT+USDC', parseCurrencies)
    .option('--all-currencies', 'accept every coin of the accepted chains again')
    .option('--events <types>', 'webhook event types sent, comma-separated', parseEvents)
    .option('--all-events', 'send every webhook event type again')
    .addOption(new Option('--json', 'machine-readable output'))
    .action(async (id: string, opts: { name?: string; webhookUrl?: string; webhook?: boolean; chains?: string[]; allChains?: boolean; currencies?: Record<string, string[]>; allCurrencies?: boolean; events?: string[]; allEvents?: boolean; json?: boolean }) => {
      if (opts.webhookUrl && opts.webhook === false) throw new UsageError('give either --webhook-url or --no-webhook, not both');
      if (opts.events && opts.allEvents) throw new UsageError('give either --events or --all-events, not both');
      await withCommon(async (common) => {
        const changes: MerchantChanges = {};
        if (opts.name) changes.name = opts.name;
        if (opts.webhookUrl) changes.webhookUrl = opts.webhookUrl;
        if (opts.webhook === false) changes.webhookUrl = null;
        if (opts.chains) changes.acceptedChains = opts.chains;
        if (opts.allChains) changes.acceptedChains = null;
        if (opts.currencies) changes.acceptedCurrencies = opts.currencies;
        if (opts.allCurrencies) changes.acceptedCurrencies = null;
        if (opts.events) changes.webhookEvents = opts.events;
        if (opts.allEvents) changes.webhookEvents = null;
        const merchant = await updatePoint(common, id, changes, null);
        const view = merchantView(merchant);
        emit(opts.json, view, () => keyValues({ ...view }));
      });
    });

  for (const [name, active] of [['disable', false], ['enable', true]] as const) {
    cmd
      .command(name)
      .description(active ? 'accept API requests of this point again' : 'refuse every API request of this point (API_KEY_INVALID)')
      .argument('<id>', 'merchant point id')
      .option('--json', 'machine-readable output')
      .action(async (id: string, opts: { json?: boolean }) => {
        await withCommon(async (common) => {
          const merchant = await updatePoint(common, id, { active }, null);
          const view = merchantView(merchant);
          emit(opts.json, view, () => `merchant point ${view.id} is now ${active ? 'active' : 'disabled'}`);
        });
      });
  }
  return cmd;
}
