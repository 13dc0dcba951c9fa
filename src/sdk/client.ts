import { randomUUID } from 'node:crypto';
import { signRequest } from './sign-request.ts';
import { constructWebhookEvent, standardWebhookSecret, type VerifyWebhookInput } from './verify-webhook.ts';
import type { CheckoutResult, Invoice, InvoiceStatus, InvoiceWithPayments, Payment, PaymentList, PaymentStatus, PaymentStatusName, RefundList } from './wire.ts';

// A small typed client of the chaingate merchant gateway (/api/v1), for merchant back ends. It
// needs nothing but Node and the files beside it (sign-request.ts, verify-webhook.ts, wire.ts): copy
// them into your codebase. They are erasable TypeScript (no enums, namespaces or parameter
// properties), so Node 22.18+ runs them as they are; tsc, tsx or a bundler work too. Every call is signed; every write carries an Idempotency-Key
// (yours, or a fresh UUID) that stays the same across its retries, so a retry can never create a
// second invoice. Retried with back-off: 409 "still being processed" (the first attempt is running),
// 429 (after Retry-After), 503 and network failures. Everything else is a ChaingateApiError.

export interface ClientOptions {
  /** The daemon's base URL, e.g. https://pay.example.com (no trailing slash). */
  baseUrl: string;
  apiKey: string;
  apiSecret: string;
  /** Attempts per call, the first included (default 5). */
  maxAttempts?: number;
  /** First back-off in ms, doubled each retry (default 250). */
  retryBaseMs?: number;
  fetch?: typeof fetch;
}

export interface CallOptions {
  /** Reuse the same key for every retry of one logical operation (store it with your order). */
  idempotencyKey?: string;
}

// Plain fields assigned in the constructor (no parameter properties): every file of src/sdk is
// erasable TypeScript, so Node 22.18+ runs it as is, with its built-in type stripping.
export class ChaingateApiError extends Error {
  override readonly name = 'ChaingateApiError';
  readonly status: number;
  readonly code: string;
  readonly requestId: string | null;
  readonly details: { path: string; message: string }[] | undefined;

  constructor(message: string, status: number, code: string, requestId: string | null, details: { path: string; message: string }[] | undefined) {
    super(message);
    this.status = status;
    this.code = code;
    this.requestId = requestId;
    this.details = details;
  }
}

export interface CreateInvoiceInput {
  orderId: string;
  /** Minor units of the fiat currency, as a string: "2500" is USD 25.00. */
  amount: string;
  currency: string;
  description?: string;
  customerEmail?: string;
  customerName?: string;
  customerMetadata?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  returnUrl?: string;
  cancelUrl?: string;
  expiresInMinutes?: number;
}

export interface CheckoutInput {
  blockchain: string;
  cryptoCurrency: string;
  testnet?: boolean;
}

export interface ListPaymentsQuery {
  status?: PaymentStatusName;
  blockchain?: string;
  skip?: number;
  take?: number;
}

// The shapes of `data` are the wire views of wire.ts, shared with the server (docs/api.md#objects).
export type { InvoiceStatusName, PaymentStatusName, Invoice, PaymentInInvoice, InvoiceWithPayments, InvoiceStatus, CheckoutResult, Payment, Refund, RefundList, PaymentList, PaymentStatus } from './wire.ts';

export interface ChaingateClient {
  createInvoice(input: CreateInvoiceInput, options?: CallOptions): Promise<Invoice>;
  getInvoice(id: string): Promise<InvoiceWithPayments>;
  invoiceStatus(id: string): Promise<InvoiceStatus>;
  cancelInvoice(id: string, options?: CallOptions): Promise<Invoice>;
  checkout(invoiceId: string, input: CheckoutInput, options?: CallOptions): Promise<CheckoutResult>;
  listPayments(query?: ListPaymentsQuery): Promise<PaymentList>;
  /** The same shape as a `listPayments` item. */
  getPayment(id: string): Promise<Payment>;
  /** The payment's refunds (chaingate's addition to the specification; docs/refunds.md#on-the-api). */
  paymentRefunds(id: string): Promise<RefundList>;
  paymentStatus(id: string): Promise<PaymentStatus>;
  /** Verifies a delivery (X-Webhook-Signature) and returns the parsed event; throws WebhookVerificationError. */
  verifyWebhook<T = unknown>(input: Omit<VerifyWebhookInput, 'apiSecret'>): T;
  /** The apiSecret in the form Standard Webhooks libraries take (whsec_…). */
  standardWebhookSecret(): string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function createChaingateClient(options: ClientOptions): ChaingateClient {
  const doFetch = options.fetch ?? fetch;
  const maxAttempts = Math.max(1, options.maxAttempts ?? 5);
  const base = options.baseUrl.replace(/\/+$/, '');

  async function call<T>(method: string, path: string, payload?: unknown, callOptions: CallOptions = {}): Promise<T> {
    const body = payload === undefined ? undefined : JSON.stringify(payload);
    const idempotencyKey = method === 'GET' ? undefined : (callOptions.idempotencyKey ?? randomUUID());
    for (let attempt = 1; ; attempt++) {
      const backoff = (options.retryBaseMs ?? 250) * 2 ** (attempt - 1);
      let res: Response;
      try {
        // Signed at each attempt: `t` is "now" and must be within 300 s of the server's clock.
        const headers = signRequest({ apiKey: options.apiKey, apiSecret: options.apiSecret, method, path, body, idempotencyKey });
        if (body === undefined) delete headers['Content-Type'];
        res = await doFetch(base + path, { method, headers, body });
      } catch (err) {
        if (attempt >= maxAttempts) throw err;
        await sleep(backoff);
        continue;
      }
      const text = await res.text();
      type Envelope = { success?: boolean; data?: T; error?: { code: string; message: string; details?: { path: string; message: string }[] }; requestId?: string };
      let json: Envelope | null;
      try {
        const parsed: unknown = JSON.parse(text);
        json = parsed && typeof parsed === 'object' ? (parsed as Envelope) : null;
      } catch {
        json = null;
      }
      if (json?.success === true) return json.data as T;
      const code = json?.error?.code ?? `HTTP_${res.status}`;
      const inFlight = res.status === 409 && /still being processed/i.test(json?.error?.message ?? '');
      const retryable = inFlight || res.status === 429 || res.status === 503 || res.status === 502 || res.status === 504;
      if (retryable && attempt < maxAttempts) {
        const after = Number(res.headers.get('retry-after'));
        await sleep(Number.isFinite(after) && after > 0 ? Math.min(after * 1000, 30_000) : backoff);
        continue;
      }
      throw new ChaingateApiError(`${res.status} ${code}: ${json?.error?.message ?? text.slice(0, 200)}`, res.status, code, json?.requestId ?? null, json?.error?.details);
    }
  }

  const query = (q: ListPaymentsQuery = {}) => {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(q)) if (v !== undefined) params.set(k, String(v));
    const s = params.toString();
    return s ? `?${s}` : '';
  };
  const id = (value: string) => encodeURIComponent(value);

  return {
    createInvoice: (input, o) => call('POST', '/api/v1/invoices', input, o),
    getInvoice: (invoiceId) => call('GET', `/api/v1/invoices/${id(invoiceId)}`),
    invoiceStatus: (invoiceId) => call('GET', `/api/v1/invoices/${id(invoiceId)}/status`),
    cancelInvoice: (invoiceId, o) => call('DELETE', `/api/v1/invoices/${id(invoiceId)}`, undefined, o),
    checkout: (invoiceId, input, o) => call('POST', `/api/v1/invoices/${id(invoiceId)}/checkout`, input, o),
    listPayments: (q) => call('GET', `/api/v1/payments${query(q)}`),
    getPayment: (paymentId) => call('GET', `/api/v1/payments/${id(paymentId)}`),
    paymentRefunds: (paymentId) => call('GET', `/api/v1/payments/${id(paymentId)}/refunds`),
    paymentStatus: (paymentId) => call('GET', `/api/v1/payments/${id(paymentId)}/status`),
    verifyWebhook: <T>(input: Omit<VerifyWebhookInput, 'apiSecret'>) => constructWebhookEvent<T>({ ...input, apiSecret: options.apiSecret }),
    standardWebhookSecret: () => standardWebhookSecret(options.apiSecret),
  };
}
