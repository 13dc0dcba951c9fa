// A merchant back end's use of the chaingate client, runnable as it is:
//   CHAINGATE_URL=http://127.0.0.1:8080 CHAINGATE_API_KEY=… CHAINGATE_API_SECRET=… node src/sdk/example-merchant.ts
// (Node 22.18+ runs the TypeScript as it is; on older Node: node --import tsx …)
// It creates an invoice, opens a payment on ethereum USDT for it, reads it back three ways,
// cancels a second invoice, and prints one JSON line per step. (docs/api.md#the-merchant-sdk)
import { randomUUID } from 'node:crypto';
import { ChaingateApiError, createChaingateClient } from './client.ts';

const client = createChaingateClient({
  baseUrl: process.env.CHAINGATE_URL ?? 'http://127.0.0.1:8080',
  apiKey: process.env.CHAINGATE_API_KEY ?? '',
  apiSecret: process.env.CHAINGATE_API_SECRET ?? '',
});
const show = (step: string, value: unknown) => console.log(JSON.stringify({ step, ...(value as object) }));

// Keep the key with the order: a retry of this creation after a timeout replays the first answer.
const orderKey = randomUUID();
const invoice = await client.createInvoice({ orderId: 'order-1042', amount: '2500', currency: 'USD', description: 'Two mugs', returnUrl: 'https://shop.example/thanks' }, { idempotencyKey: orderKey });
show('created', { id: invoice.id, status: invoice.status });
const again = await client.createInvoice({ orderId: 'order-1042', amount: '2500', currency: 'USD', description: 'Two mugs', returnUrl: 'https://shop.example/thanks' }, { idempotencyKey: orderKey });
show('retried', { sameInvoice: again.id === invoice.id });

const { payment } = await client.checkout(invoice.id, { blockchain: 'ethereum', cryptoCurrency: 'USDT' });
show('checkout', { paymentId: payment.id, address: payment.paymentAddress, amount: payment.amount });
show('status', await client.paymentStatus(payment.id));
show('invoiceStatus', await client.invoiceStatus(invoice.id)); // flat: id, referenceId, status, paymentId, paidAt, expiresAt
const listed = await client.listPayments({ take: 5 });
show('listed', { total: listed.pagination.total, first: listed.items[0]?.id });
show('invoice', { status: (await client.getInvoice(invoice.id)).status });

const spare = await client.createInvoice({ orderId: 'order-1043', amount: '990', currency: 'USD' });
show('cancelled', { status: (await client.cancelInvoice(spare.id)).status });
try {
  await client.cancelInvoice(spare.id);
} catch (err) {
  if (!(err instanceof ChaingateApiError)) throw err;
  show('refused', { status: err.status, code: err.code });
}
