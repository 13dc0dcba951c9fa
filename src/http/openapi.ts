import { z } from 'zod';
import { ERROR_STATUS, type ErrorCode } from '../domain/errors.ts';
import { createInvoiceBody, gatewayCheckoutBody, listPaymentsQuery } from './gateway/schemas.ts';
import { confirmBody, publicCheckoutBody } from './checkout/schemas.ts';
import { RESPONSE_SCHEMAS } from './openapi-responses.ts';

// OpenAPI 3.1 documents of both surfaces, generated from zod schemas (z.toJSONSchema): the request
// bodies and queries from the schemas the routes validate with, the `data` of each success answer
// from the response schemas of openapi-responses.ts (tied to the view functions at compile time);
// plus the envelope, the signature and idempotency headers and every error code.
// Served at /api/v1/openapi.json and /checkout/api/v1/openapi.json; a test checks that every route
// the server registers is in them and that they validate as OpenAPI 3.1.

type Surface = keyof typeof RESPONSE_SCHEMAS;
type DataSchema<S extends Surface> = keyof (typeof RESPONSE_SCHEMAS)[S];

interface RouteDoc<S extends Surface> {
  method: 'get' | 'post' | 'delete';
  /** OpenAPI path template ({id}). */
  path: string;
  summary: string;
  body?: z.ZodType;
  query?: z.ZodType;
  /** The success status and the schema of `data` (components.schemas; docs/api.md, docs/checkout.md). */
  success: [number, DataSchema<S>];
  errors: ErrorCode[];
  /** Checkout routes guarded by an id token. */
  bearer?: boolean;
}

const AUTH_ERRORS: ErrorCode[] = ['API_KEY_INVALID', 'SIGNATURE_MISSING', 'SIGNATURE_INVALID', 'SIGNATURE_EXPIRED'];
const WRITE_ERRORS: ErrorCode[] = ['IDEMPOTENCY_KEY_REQUIRED', 'IDEMPOTENCY_KEY_CONFLICT'];
const COMMON_ERRORS: ErrorCode[] = ['VALIDATION_ERROR', 'HEADERS_TOO_LARGE', 'REQUEST_TIMEOUT', 'RATE_LIMITED', 'SERVICE_UNAVAILABLE', 'DATABASE_BUSY', 'INTERNAL_ERROR'];
/** Answers about a request body, before any route code runs. */
const BODY_ERRORS: ErrorCode[] = ['PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'];

export const GATEWAY_ROUTES: RouteDoc<'gateway'>[] = [
  { method: 'post', path: '/invoices', summary: 'Create an invoice (OPEN)', body: createInvoiceBody, success: [201, 'Invoice'], errors: ['INVALID_CURRENCY'] },
  { method: 'get', path: '/invoices/{id}', summary: 'Get an invoice with its payments', success: [200, 'InvoiceWithPayments'], errors: ['INVOICE_NOT_FOUND'] },
  { method: 'get', path: '/invoices/{id}/status', summary: "Invoice status and its latest payment's id (a cheap poll)", success: [200, 'InvoiceStatus'], errors: ['INVOICE_NOT_FOUND'] },
  { method: 'delete', path: '/invoices/{id}', summary: 'Cancel an OPEN or DRAFT invoice', success: [200, 'Invoice'], errors: ['INVOICE_NOT_FOUND', 'INVOICE_CANNOT_BE_CANCELLED'] },
  {
    method: 'post',
    path: '/invoices/{id}/checkout',
    summary: 'Choose chain and coin: lease a deposit address and open a payment',
    body: gatewayCheckoutBody,
    success: [201, 'GatewayCheckout'],
    errors: ['INVOICE_NOT_FOUND', 'INVOICE_NOT_AVAILABLE', 'INVOICE_EXPIRED', 'INVALID_CURRENCY', 'PAYMENT_ALREADY_IN_PROGRESS', 'CHAIN_NOT_MONITORED', 'NO_AVAILABLE_WALLET', 'BLOCKCHAIN_NOT_SUPPORTED', 'RATE_UNAVAILABLE', 'CONTRACT_NOT_CONFIGURED'],
  },
  { method: 'get', path: '/payments', summary: 'List payments, newest first', query: listPaymentsQuery, success: [200, 'PaymentList'], errors: [] },
  { method: 'get', path: '/payments/{id}', summary: 'Get a payment (the same shape as a list item)', success: [200, 'Payment'], errors: ['PAYMENT_NOT_FOUND'] },
  { method: 'get', path: '/payments/{id}/refunds', summary: "A payment's refunds, oldest first (chaingate addition)", success: [200, 'RefundList'], errors: ['PAYMENT_NOT_FOUND'] },
  { method: 'get', path: '/payments/{id}/status', summary: 'Payment status projection (a cheap poll)', success: [200, 'PaymentStatus'], errors: ['PAYMENT_NOT_FOUND'] },
];

export const CHECKOUT_ROUTES: RouteDoc<'checkout'>[] = [
  { method: 'get', path: '/invoices/{id}', summary: 'The public invoice: amount, merchant, chain and coin choices', success: [200, 'PublicInvoice'], errors: ['INVOICE_NOT_FOUND', 'INVOICE_EXPIRED', 'INVOICE_CANCELLED'] },
  { method: 'get', path: '/invoices/{id}/status', summary: 'Invoice status poll (200 in every state)', success: [200, 'PublicInvoiceStatus'], errors: ['INVOICE_NOT_FOUND'] },
  {
    method: 'post',
    path: '/invoices/{id}/checkout',
    summary: "The buyer's checkout: lease a deposit address (or prepare a contract payment)",
    body: publicCheckoutBody,
    success: [201, 'PublicCheckout'],
    errors: ['INVOICE_NOT_FOUND', 'INVOICE_NOT_AVAILABLE', 'INVOICE_EXPIRED', 'INVOICE_CANCELLED', 'INVALID_CURRENCY', 'PAYMENT_ALREADY_IN_PROGRESS', 'NO_AVAILABLE_WALLET', 'BLOCKCHAIN_NOT_SUPPORTED', 'RATE_UNAVAILABLE', 'CONTRACT_NOT_CONFIGURED'],
  },
  { method: 'get', path: '/payments/{id}/status', summary: 'Payment status poll: confirmations and the deposit', success: [200, 'PublicPaymentStatus'], errors: ['PAYMENT_NOT_FOUND'] },
  {
    method: 'post',
    path: '/payments/{id}/confirm',
    summary: 'Attach a contract payment transaction (id token required)',
    body: confirmBody,
    success: [200, 'ConfirmResult'],
    errors: ['UNAUTHORIZED', 'PAYMENT_NOT_FOUND', 'PAYMENT_EXPIRED', 'PAYMENT_NOT_CONFIRMABLE', 'TX_NOT_FOUND', 'TX_FAILED', 'TX_CONTRACT_MISMATCH', 'TX_PAYMENT_MISMATCH'],
    bearer: true,
  },
];

const schemaOf = (s: z.ZodType) => z.toJSONSchema(s, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;

/** The response schemas of a surface as components.schemas, referring to each other by $ref. */
function responseComponents(surface: Surface): Record<string, Record<string, unknown>> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(RESPONSE_SCHEMAS[surface])) registry.add(schema as z.ZodType, { id });
  const { schemas } = z.toJSONSchema(registry, { io: 'output', unrepresentable: 'any', uri: (id) => `#/components/schemas/${id}` });
  return Object.fromEntries(
    Object.entries(schemas).map(([id, schema]) => {
      const { $schema: _dialect, $id: _id, ...rest } = schema as Record<string, unknown>;
      return [id, rest];
    }),
  );
}

function envelopeComponents() {
  const codes = Object.keys(ERROR_STATUS) as ErrorCode[];
  return {
    ErrorCode: { type: 'string', enum: codes, description: 'Stable error codes (docs/errors.md); the HTTP status of each is fixed.' },
    ErrorEnvelope: {
      type: 'object',
      required: ['success', 'error', 'timestamp', 'requestId'],
      properties: {
        success: { const: false },
        error: {
          type: 'object',
          required: ['code', 'message'],
          properties: {
            code: { $ref: '#/components/schemas/ErrorCode' },
            message: { type: 'string' },
            details: { type: 'array', items: { type: 'object', required: ['path', 'message'], properties: { path: { type: 'string' }, message: { type: 'string' } } }, description: 'VALIDATION_ERROR only' },
          },
        },
        timestamp: { type: 'string', format: 'date-time' },
        requestId: { type: 'string', pattern: '^req_[0-9a-f]{24}$', description: 'Also the X-Request-Id header' },
      },
    },
    SuccessEnvelope: {
      type: 'object',
      required: ['success', 'data', 'timestamp', 'requestId'],
      properties: { success: { const: true }, data: {}, timestamp: { type: 'string', format: 'date-time' }, requestId: { type: 'string', pattern: '^req_[0-9a-f]{24}$' } },
    },
  };
}

function errorResponses(codes: ErrorCode[]): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
  return Object.fromEntries(
    [...byStatus].map(([status, list]) => [
      String(status),
      {
        description: list.join(', '),
        content: { 'application/json': { schema: { allOf: [{ $ref: '#/components/schemas/ErrorEnvelope' }, { properties: { error: { properties: { code: { enum: list } } } } }] } } },
      },
    ]),
  );
}

function operation<S extends Surface>(route: RouteDoc<S>, surface: S) {
  const write = route.method !== 'get';
  const signed = surface === 'gateway';
  const errors: ErrorCode[] = [...route.errors, ...COMMON_ERRORS, ...(route.body ? BODY_ERRORS : []), ...(signed ? AUTH_ERRORS : []), ...(signed && write ? WRITE_ERRORS : [])];
  const parameters: Record<string, unknown>[] = [];
  if (route.path.includes('{id}')) parameters.push({ name: 'id', in: 'path', required: true, schema: { type: 'string' } });
  if (signed && write) {
    parameters.push({ $ref: '#/components/parameters/IdempotencyKey' });
  }
  if (route.query) {
    const q = schemaOf(route.query) as { properties?: Record<string, Record<string, unknown>>; required?: string[] };
    for (const [name, schema] of Object.entries(q.properties ?? {})) parameters.push({ name, in: 'query', required: (q.required ?? []).includes(name), schema });
  }
  return {
    summary: route.summary,
    operationId: `${surface}_${route.method}_${route.path.replace(/[{}]/g, '').replace(/\//g, '_')}`,
    ...(parameters.length ? { parameters } : {}),
    ...(route.body ? { requestBody: { required: true, content: { 'application/json': { schema: schemaOf(route.body) } } } } : {}),
    ...(signed ? { security: [{ ApiKey: [], Signature: [] }] } : route.bearer ? { security: [{ IdToken: [] }] } : { security: [] }),
    responses: {
      [String(route.success[0])]: {
        description: `data: ${String(route.success[1])}${signed && write ? ' (replayed byte for byte for the same Idempotency-Key, with Idempotent-Replayed: true)' : ''}`,
        headers: { 'X-Request-Id': { schema: { type: 'string' } } },
        content: {
          'application/json': {
            schema: { allOf: [{ $ref: '#/components/schemas/SuccessEnvelope' }, { type: 'object', properties: { data: { $ref: `#/components/schemas/${String(route.success[1])}` } } }] },
          },
        },
      },
      ...errorResponses(errors),
    },
  };
}

export function openApiDocument(surface: Surface): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  if (surface === 'gateway') for (const r of GATEWAY_ROUTES) (paths[r.path] ??= {})[r.method] = operation(r, surface);
  else for (const r of CHECKOUT_ROUTES) (paths[r.path] ??= {})[r.method] = operation(r, surface);
  const securitySchemes =
    surface === 'gateway'
      ? {
          ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: "The merchant point's API key" },
          Signature: {
            type: 'apiKey',
            in: 'header',
            name: 'X-Signature',
            description:
              't=<unix seconds>,v1=<64 lowercase hex>: HMAC-SHA256 keyed with the apiSecret over the lines t, METHOD, path (no query), Idempotency-Key (writes only) and the sha256 hex of the raw body, joined by LF; 300 s tolerance (docs/api.md#the-canonical-string)',
          },
        }
      : { IdToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT (ES256)', description: "The identity provider's id token (docs/checkout.md)" } };
  return {
    openapi: '3.1.0',
    info: {
      title: surface === 'gateway' ? 'chaingate merchant gateway' : 'chaingate buyer checkout',
      version: '1',
      description:
        surface === 'gateway'
          ? 'Signed, idempotent merchant API. Every answer is the envelope { success, data | error, timestamp, requestId }. Writes need an Idempotency-Key.'
          : 'Unauthenticated buyer API (the invoice id is the capability), rate-limited per client; /confirm takes an id token.',
    },
    servers: [{ url: surface === 'gateway' ? '/api/v1' : '/checkout/api/v1' }],
    paths,
    components: {
      schemas: { ...envelopeComponents(), ...responseComponents(surface) },
      securitySchemes,
      parameters: {
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: true,
          schema: { type: 'string', minLength: 1, maxLength: 255 },
          description: 'One per logical operation (a UUID); the same key with the same request replays the stored answer; with another request: 409 IDEMPOTENCY_KEY_CONFLICT (docs/api.md#idempotency)',
        },
      },
    },
  };
}
