import { randomBytes } from 'node:crypto';
import { Command } from 'commander';
import { UsageError } from '../../domain/errors.ts';
import { getMerchantOrThrow, listMerchants, openSecret, type MerchantRecord } from '../../store/merchants.ts';
import { ChaingateApiError, createChaingateClient } from '../../sdk/client.ts';
import type { Config } from '../../config/schema.ts';
import { withCommon } from '../context.ts';
import { emit, keyValues } from '../output.ts';

// `chaingate invoice create`: a test invoice without writing signing code. The command signs the
// request with the merchant point's own stored credentials through the SDK (src/sdk/client.ts) and
// sends it to the running `serve`, exactly the request a shop's back end makes, then prints the
// page to open.

function parseAmount(value: string): string {
  if (!/^[1-9]\d{0,14}$/.test(value)) throw new UsageError('--amount must be a whole number of minor units, 1 to 15 digits (2500 is 25.00 USD)');
  return value;
}

function parseExpiry(value: string): number {
  const minutes = Number(value);
  if (!/^\d+$/.test(value) || minutes < 15 || minutes > 1440) throw new UsageError('--expires-in must be a number of minutes from 15 to 1440');
  return minutes;
}

function parseBaseUrl(value: string): string {
  if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) throw new UsageError(`--url must be serve's http(s) address, e.g. http://127.0.0.1:8080 (got ${JSON.stringify(value)})`);
  return value.replace(/\/+$/, '');
}

/** Where this configuration's `serve` listens, as a client reaches it. */
function serveUrl(config: Config): string {
  const host = ['0.0.0.0', '::', ''].includes(config.server.host) ? '127.0.0.1' : config.server.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.server.port}`;
}

/** The one active merchant point, or the one named; several without --merchant is a question for the operator. */
async function chooseMerchant(all: MerchantRecord[], id: string | undefined, db: Parameters<typeof getMerchantOrThrow>[0]): Promise<MerchantRecord> {
  if (id) {
    const m = await getMerchantOrThrow(db, id).catch(() => null);
    if (!m) throw new UsageError(`no merchant point ${id} (\`chaingate merchant list\` shows them)`);
    if (!m.active) throw new UsageError(`merchant point ${id} is disabled (\`chaingate merchant enable ${id}\`)`);
    return m;
  }
  const active = all.filter((m) => m.active);
  if (active.length === 1) return active[0]!;
  if (active.length === 0) throw new UsageError('no active merchant point: create one with `chaingate merchant create --name NAME`');
  throw new UsageError(`${active.length} active merchant points: choose one with --merchant ID (${active.map((m) => `${m.id} "${m.name}"`).join(', ')})`);
}

export function invoiceCommand(): Command {
  const cmd = new Command('invoice').description("test invoices from the command line: signed with a merchant point's own credentials and sent to the running serve");
  cmd
    .command('create')
    .description('create an invoice through the signed API of the running serve and print its payment page')
    .requiredOption('--amount <minor>', 'fiat amount in minor units: 2500 is 25.00 USD', parseAmount)
    .option('--currency <code>', 'ISO 4217 currency', 'USD')
    .option('--merchant <id>', 'merchant point (default: the only active one)')
    .option('--order-id <id>', "the shop's order id (default: cli-<random>)")
    .option('--description <text>', 'what the buyer sees on the page')
    .option('--return-url <url>', 'where the page sends the buyer once paid')
    .option('--expires-in <minutes>', 'minutes until the invoice expires (15 to 1440; default 60)', parseExpiry)
    .option('--url <baseUrl>', "serve's address (default: server.host and server.port of this configuration)", parseBaseUrl)
    .option('--json', 'machine-readable output')
    .action(
      async (opts: { amount: string; currency: string; merchant?: string; orderId?: string; description?: string; returnUrl?: string; expiresIn?: number; url?: string; json?: boolean }) => {
        await withCommon(
          async (common) => {
            const merchant = await chooseMerchant(await listMerchants(common.db), opts.merchant, common.db);
            const baseUrl = opts.url ?? serveUrl(common.config);
            const client = createChaingateClient({ baseUrl, apiKey: merchant.apiKey, apiSecret: openSecret(common.box, merchant), maxAttempts: 2, retryBaseMs: 100 });
            let invoice: Awaited<ReturnType<typeof client.createInvoice>>;
            try {
              invoice = await client.createInvoice({
                orderId: opts.orderId ?? `cli-${randomBytes(4).toString('hex')}`,
                amount: opts.amount,
                currency: opts.currency,
                ...(opts.description === undefined ? {} : { description: opts.description }),
                ...(opts.returnUrl === undefined ? {} : { returnUrl: opts.returnUrl }),
                ...(opts.expiresIn === undefined ? {} : { expiresInMinutes: opts.expiresIn }),
              });
            } catch (err) {
              if (err instanceof ChaingateApiError) {
                const details = err.details?.map((d) => `${d.path.replace(/^body\./, '--')}: ${d.message}`).join('; ');
                throw new UsageError(`${err.code}: ${err.message}${details ? ` (${details})` : ''}`);
              }
              const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : err instanceof Error ? err.message : String(err);
              throw new UsageError(`cannot reach serve at ${baseUrl} (${cause}): is \`chaingate serve\` running with this configuration? (or pass --url)`);
            }
            const page = common.config.server.checkoutPageUrl ?? baseUrl;
            const out = {
              id: invoice.id,
              referenceId: invoice.referenceId,
              status: invoice.status,
              amount: invoice.amount,
              currency: invoice.currency,
              orderId: invoice.orderId,
              merchant: merchant.id,
              expiresAt: invoice.expiresAt,
              checkoutUrl: `${page.replace(/\/+$/, '')}/i/${invoice.id}`,
            };
            emit(opts.json, out, () => `${keyValues(out)}\n\nopen ${out.checkoutUrl}`);
          },
          { readOnly: true },
        );
      },
    );
  return cmd;
}
