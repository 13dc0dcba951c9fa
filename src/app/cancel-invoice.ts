import { invoiceView } from '../domain/views.ts';
import { cancelInvoiceIn } from '../store/invoices.ts';
import type { DaemonDeps } from './deps.ts';
import { idempotentWrite, type WriteOutcome, type WriteRequest } from './idempotent-write.ts';

/** DELETE /api/v1/invoices/{id}: an idempotent write answered 200 with the cancelled invoice. */
export function cancelInvoice(deps: DaemonDeps, request: WriteRequest, merchantId: string, invoiceId: string): Promise<WriteOutcome> {
  return idempotentWrite(deps.common.db, request, 200, async (x) => invoiceView(await cancelInvoiceIn(x, invoiceId, merchantId)));
}
